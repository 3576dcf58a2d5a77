// PostgreSQL emulator budget: lobby creates through two `gamehost emulator serve --database` replicas on one
// database, against the same load on two processes of a bare skeleton (bench/pg-skeleton.js: node:http + pg, the
// same two inserts in one transaction, nothing else) on the same database. Budget: at least 0.7x the skeleton's
// requests per second, 0 errors, p99 within 1.5x the skeleton's. The pairs take turns (E S E S …, BENCH_PG_ROUNDS
// each) so drift in machine speed hits both alike; medians are compared. The emulator's creates are spread over
// NAMESPACES namespaces of the game, in turn, as a shared staging emulator's CI jobs each use their own: a namespace
// runs at most 128 lobbies (production's lobby_count_max), and the run makes some 25,000.
// The server: GAMEHOST_BENCH_DATABASE_URL (an empty database), else an embedded one started here (its database postgres).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startEmbeddedPostgres } from './embedded-postgres.js';
import { createLoad, namespaceTokens } from './namespaces.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.join(HERE, '..', 'bin', 'gamehost.js');
const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const ROUNDS = Number(process.env.BENCH_PG_ROUNDS ?? 2);
const BUDGET_RATIO = 0.7;
const BUDGET_P99 = 1.5;
const NAMESPACES = 512;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** An empty database: the one named, else a fresh embedded server's. */
async function database() {
  if (process.env.GAMEHOST_BENCH_DATABASE_URL) return { url: process.env.GAMEHOST_BENCH_DATABASE_URL, stop: async () => {} };
  return startEmbeddedPostgres();
}

/** A child that prints one JSON line with its endpoint when listening. */
async function start(args) {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const line = await new Promise((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code} before it listened`)));
  });
  return {
    info: JSON.parse(line),
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

function load(info, duration, tokens) {
  return createLoad(info.endpoint, { tokens, connections: CONNECTIONS, duration });
}

/** The same load on both processes of a pair at once: total req/s, the worse p99, every failure counted. */
async function loadPair(pair, duration) {
  const [x, y] = await Promise.all(pair.map((p) => load(p.info, duration, p.tokens)));
  return {
    rps: x.requests.average + y.requests.average,
    p99: Math.max(x.latency.p99, y.latency.p99),
    total: x.requests.total + y.requests.total,
    failed: x.non2xx + y.non2xx + x.errors + y.errors + x.timeouts + y.timeouts,
  };
}

export async function runEmulatorPostgresBench() {
  const db = await database();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gamehost-bench-'));
  const pairs = [];
  try {
    const replica = () => start([BIN, 'emulator', 'serve', '--port', '0', '--json', '--quiet', '--database', db.url, '--data-dir', dataDir]);
    // The replicas create the schema the skeleton writes into.
    const emulators = await Promise.all([replica(), replica()]);
    pairs.push(emulators);
    // One set of namespaces for both replicas (they share the database and its secret), each starting at its own.
    const tokens = await namespaceTokens(emulators[0].info, NAMESPACES);
    emulators[0].tokens = tokens;
    emulators[1].tokens = [...tokens.slice(NAMESPACES / 2), ...tokens.slice(0, NAMESPACES / 2)];
    const skeletons = await Promise.all([0, 1].map(() => start([path.join(HERE, 'pg-skeleton.js'), db.url])));
    pairs.push(skeletons);
    // Warm-up (JIT, connections, the database's caches), then the measured turns.
    await loadPair(emulators, 2);
    await loadPair(skeletons, 2);
    const runs = { emulator: [], skeleton: [] };
    for (let i = 0; i < ROUNDS; i++) {
      runs.emulator.push(await loadPair(emulators, DURATION_S));
      runs.skeleton.push(await loadPair(skeletons, DURATION_S));
    }
    const summary = (rs) => ({
      rps: median(rs.map((r) => r.rps)),
      p99: median(rs.map((r) => r.p99)),
      total: rs.reduce((n, r) => n + r.total, 0),
      failed: rs.reduce((n, r) => n + r.failed, 0),
    });
    const e = summary(runs.emulator);
    const s = summary(runs.skeleton);
    const ratio = e.rps / s.rps;
    const p99Ratio = e.p99 / Math.max(s.p99, 1);
    const ok = ratio >= BUDGET_RATIO && e.failed === 0 && s.failed === 0 && p99Ratio <= BUDGET_P99;
    console.log(`emulator on PostgreSQL, lobby create (two processes each, ${CONNECTIONS} connections to each, ${ROUNDS} x ${DURATION_S} s, medians; load average ${os.loadavg()[0].toFixed(1)}):`);
    console.log(`  skeleton  ${s.rps.toFixed(0).padStart(6)} req/s  p99 ${s.p99} ms  ${s.total} requests, ${s.failed} failed`);
    console.log(`  emulator  ${e.rps.toFixed(0).padStart(6)} req/s  p99 ${e.p99} ms  ${e.total} requests, ${e.failed} failed`);
    console.log(
      `  ${ratio.toFixed(2)}x the skeleton's req/s, p99 ${p99Ratio.toFixed(2)}x` +
        (ok ? `  ok (budget ${BUDGET_RATIO}x, p99 ${BUDGET_P99}x, 0 errors)` : `  OVER BUDGET (${BUDGET_RATIO}x, p99 ${BUDGET_P99}x, 0 errors)`),
    );
    return ok;
  } finally {
    for (const pair of pairs) await Promise.all(pair.map((p) => p.stop()));
    rmSync(dataDir, { recursive: true, force: true });
    await db.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = (await runEmulatorPostgresBench()) ? 0 : 1;
