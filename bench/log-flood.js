// Log flood budget: 4 servers run by `gamehost emulator serve --run` each print 1 GiB without a newline (random
// base64, which the database does not compress) on PostgreSQL, which stalls for 20 s while they print (a proxy
// stops forwarding). Budgets: serve's RSS (/proc/<pid>/status VmRSS, sampled every 100 ms) stays under its RSS at
// start + 100 MiB, and the database grows at most the store's per-stream bound on disk (LOG_DISK_BYTES, 5 MiB) per lobby, measured once
// every server ended and its lines were written (pg_database_size, after a VACUUM). BENCH_LOG_FLOOD_SCALE scales
// the bytes printed and the stall (default 1: 1 GiB, 20 s). Linux (/proc).
import { spawn } from 'node:child_process';
import fs, { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startEmbeddedPostgres } from './embedded-postgres.js';
import { LOG_DISK_BYTES } from '../dist/emulator/stores/store.js';
import { stallProxy } from './stall-proxy.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.join(HERE, '..', 'bin', 'gamehost.js');
const SCALE = Number(process.env.BENCH_LOG_FLOOD_SCALE ?? 1);
const SERVERS = 4;
const BYTES = Math.round(SCALE * 2 ** 30);
const STALL_MS = Math.round(SCALE * 20_000);
const RSS_BUDGET = 100 * 2 ** 20;
const PER_LOBBY_BUDGET = LOG_DISK_BYTES;
// Prints BYTES of random base64 in 64 KiB writes, no newline.
const FLOOD = `"${process.execPath}" -e "const b=require('crypto').randomBytes(48*1024).toString('base64');let n=${BYTES};const w=()=>{while(n>0){n-=b.length;if(!process.stdout.write(b))return process.stdout.once('drain',w)}};w()"`;

const rssOf = (pid) => Number(/^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
const MiB = (b) => `${(b / 2 ** 20).toFixed(1)} MiB`;

export async function runLogFloodBench() {
  if (process.platform !== 'linux') {
    console.log('log flood: skipped (reads /proc)');
    return true;
  }
  const db = await startEmbeddedPostgres();
  const proxy = await stallProxy(new URL(db.url).hostname, Number(new URL(db.url).port));
  const proxied = new URL(db.url);
  proxied.port = String(proxy.port);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gamehost-bench-'));
  const config = path.join(dataDir, 'emulator.json');
  fs.writeFileSync(config, JSON.stringify({ startDelayMs: 0, readyDelayMs: 0 }));
  const admin = new pg.Client({ connectionString: db.url });
  let child;
  try {
    await admin.connect();
    child = spawn(process.execPath, [BIN, 'emulator', 'serve', '--port', '0', '--json', '--quiet', '--database', proxied.href, '--data-dir', path.join(dataDir, 'd'), '--config', config, '--run', FLOOD], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const info = JSON.parse(await new Promise((resolve, reject) => {
      readline.createInterface({ input: child.stdout }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
    }));
    await sleep(500);
    const atStart = rssOf(child.pid);
    const dbSize = async () => {
      await admin.query('VACUUM');
      return Number((await admin.query('SELECT pg_database_size(current_database()) AS n')).rows[0].n);
    };
    const dbBefore = await dbSize();
    let peak = atStart;
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(child.pid))), 100);
    const started = Date.now();
    const ids = [];
    for (let i = 0; i < SERVERS; i++) {
      const res = await fetch(`${info.endpoint}/matchmaker/lobbies/create`, {
        method: 'POST',
        headers: { authorization: `Bearer ${info.tokens.public}`, 'content-type': 'application/json' },
        body: JSON.stringify({ game_mode: 'default' }),
      });
      if (!res.ok) throw new Error(`lobby create answered ${res.status}: ${await res.text()}`);
      ids.push((await res.json()).lobby.lobby_id);
    }
    // The database stalls while they print.
    await sleep(1_000);
    proxy.stall();
    await sleep(STALL_MS);
    proxy.resume();
    // Every server ended and its exit (after its lines) is written.
    for (;;) {
      const { rows } = await admin.query('SELECT count(*) AS n FROM lobbies WHERE lobby_id = ANY($1) AND stop_ts IS NOT NULL', [ids]);
      if (Number(rows[0].n) === SERVERS) break;
      if (Date.now() - started > 600_000) throw new Error('the servers did not all end within 10 minutes');
      await sleep(200);
    }
    clearInterval(sampler);
    const elapsed = (Date.now() - started) / 1000;
    const kept = Number((await admin.query('SELECT COALESCE(sum(byte_count), 0) AS n FROM lobby_log_streams WHERE lobby_id = ANY($1)', [ids])).rows[0].n);
    const grown = (await dbSize()) - dbBefore;
    // Where it went: the tables (with their TOAST and indexes) that grew by more than 64 KiB.
    const tables = (
      await admin.query(
        `SELECT relname AS name, pg_total_relation_size(c.oid) AS n FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
          WHERE c.relkind = 'r' AND s.nspname NOT IN ('pg_catalog', 'information_schema') ORDER BY n DESC`,
      )
    ).rows.filter((r) => Number(r.n) > 64 * 1024);
    const rssOk = peak - atStart <= RSS_BUDGET;
    const diskOk = grown <= SERVERS * PER_LOBBY_BUDGET;
    console.log(`log flood: ${SERVERS} servers printing ${MiB(BYTES)} each without a newline, PostgreSQL stalled ${STALL_MS / 1000} s, ${elapsed.toFixed(1)} s in all (load average ${os.loadavg()[0].toFixed(1)}):`);
    console.log(`  serve's RSS at its start ${MiB(atStart)}, at its peak ${MiB(peak)}: +${MiB(peak - atStart)}  ${rssOk ? 'ok' : 'OVER BUDGET'} (budget: +100 MiB)`);
    console.log(`  the database grew ${MiB(grown)} (${MiB(grown / SERVERS)} a lobby; lines kept ${MiB(kept / SERVERS)} a lobby)  ${diskOk ? 'ok' : 'OVER BUDGET'} (budget: ${MiB(PER_LOBBY_BUDGET)} a lobby)`);
    console.log(`  its largest tables: ${tables.map((t) => `${t.name} ${MiB(Number(t.n))}`).join(', ')}`);
    return rssOk && diskOk;
  } finally {
    proxy.resume();
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    await admin.end().catch(() => {});
    await proxy.close();
    rmSync(dataDir, { recursive: true, force: true });
    await db.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = (await runLogFloodBench()) ? 0 : 1;
