// Runtime budgets, measured on the real `gamehost emulator serve --run` in its own process (Linux: it reads /proc).
// (1) A lobby's server reaches ready within 1.5x the time the same command takes under a bare child_process.spawn
// through the shell. The command is one small node script (written to a temp dir) that makes its ready call
// (POST $RIVET_API_ENDPOINT/matchmaker/lobbies/ready with its RIVET_TOKEN) and, answered, tells the bench (a request
// to a listener here, whose arrival time is the end of the measure). Under serve the time runs from the lobby
// create request sent to that notice, so it holds the create, serve's start of the server (its working directory,
// its process group, its output to the logs) and the emulator's own ready; under the bare spawn from the spawn
// call to the notice, RIVET_API_ENDPOINT pointing at the same listener, which answers the ready route as the
// emulator does (200 {}). The two run in turn (A B A B …), medians compared.
// (2) 100 lobbies (each server a shell with two `sleep` children, the three pids printed and passed on by the
// script's notice after its ready) created and stopped in a row through the admin stop route (which answers once
// the server's tree is gone): none of the pids runs after them, serve's open descriptors (/proc/<pid>/fd) the same
// as before them, and its RSS (/proc/<pid>/status VmRSS) within 1.2x of its RSS at its start. Serve collects its
// garbage once it has run no server for 5 s (runtime/servers.ts IDLE_COLLECT_MS): the reading after them comes
// later than that, once serve has closed its CPU readings of the stopped servers' processes (pidusage keeps each
// /proc/<pid>/stat open until unread for 15 s; the time that takes after the last stop is printed); the descriptors
// before them are read at rest the same way (those of the ready runs closed, the bench's keep-alive connections to
// serve timed out). BENCH_RUNTIME_WARMUP lobbies (none by default) can
// run before the 100, the descriptors read after them.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ADMIN, call } from './games.js';

const { isRunning } = await import(new URL('../dist/emulator/runtime/process.js', import.meta.url).href);
const { IDLE_COLLECT_MS } = await import(new URL('../dist/emulator/runtime/servers.js', import.meta.url).href);

const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'gamehost.js');
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const CHURN = Number(process.env.BENCH_RUNTIME_CHURN ?? 100);
const WARM_UP = Number(process.env.BENCH_RUNTIME_WARMUP ?? 0);
const READY_BUDGET = 1.5;
const RSS_BUDGET = 1.2;
// The longest a server may take to tell the bench it is ready before the bench gives up (a loaded machine's seconds).
const NOTICE_TIMEOUT_MS = 60_000;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// The lobby's server: its ready call, then its notice to the bench (the ready call's status, the pids it was given).
const SERVER_SCRIPT = `const http = require('node:http');
const post = (url, headers) => new Promise((resolve, reject) => {
  const req = http.request(url, { method: 'POST', headers, agent: false }, (res) => { res.resume(); res.once('end', () => resolve(res.statusCode)); });
  req.once('error', reject);
  req.end();
});
(async () => {
  const status = await post(process.env.RIVET_API_ENDPOINT + '/matchmaker/lobbies/ready', { authorization: 'Bearer ' + process.env.RIVET_TOKEN });
  await post(process.env.BENCH_NOTICE_URL + '/' + process.env.RIVET_LOBBY_ID + '?status=' + status + '&pids=' + process.argv.slice(2).join(','), {});
})().catch((err) => { console.error(err.message); process.exit(1); });
`;

/**
 * The bench's listener: the notices of the servers (`/notice/<lobby id>`), each kept with its arrival time until
 * asked for, and the ready route answered as the emulator answers it, for the bare spawn.
 */
async function noticeListener() {
  const arrived = new Map();
  const waiting = new Map();
  const server = http.createServer((req, res) => {
    const at = performance.now();
    req.resume();
    const url = new URL(req.url, 'http://bench');
    if (req.method === 'POST' && url.pathname === '/matchmaker/lobbies/ready') {
      res.setHeader('content-type', 'application/json');
      res.end('{}');
      return;
    }
    res.end();
    const id = decodeURIComponent(url.pathname.slice('/notice/'.length));
    const notice = { at, status: Number(url.searchParams.get('status')), pids: (url.searchParams.get('pids') || '').split(',').filter(Boolean).map(Number) };
    const waiter = waiting.get(id);
    if (waiter) {
      waiting.delete(id);
      waiter(notice);
    } else arrived.set(id, notice);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  return {
    base,
    noticeUrl: `${base}/notice`,
    /** The notice of `id`'s server: its arrival time (performance.now()), the ready call's status, the pids. */
    notice(id) {
      const got = arrived.get(id);
      arrived.delete(id);
      if (got) return Promise.resolve(got);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new Error(`the server of ${id} did not call ready within ${NOTICE_TIMEOUT_MS / 1000} s`));
        }, NOTICE_TIMEOUT_MS);
        waiting.set(id, (notice) => {
          clearTimeout(timer);
          resolve(notice);
        });
      });
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** `gamehost emulator serve --run <command>` in its own process, its --json start line read. */
async function serve(dataDir, configFile, command, env) {
  // A server gets its lobby's environment only: the notice URL is passed on by name.
  const passed = Object.keys(env).flatMap((name) => ['--pass-env', name]);
  const child = spawn(process.execPath, [BIN, 'emulator', 'serve', '--port', '0', '--json', '--quiet', '--data-dir', dataDir, '--config', configFile, '--run', command, ...passed], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, GAMEHOST_EMULATOR_ADMIN_TOKEN: ADMIN, ...env },
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const line = await new Promise((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`gamehost emulator serve exited ${code} before it listened`)));
  });
  return {
    pid: child.pid,
    info: JSON.parse(line),
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The bare spawn: the command through the shell, from the spawn call to its notice; resolves once it ended. */
async function bare(listener, command, n, workDir) {
  const id = `bare-${n}`;
  const env = { ...process.env, BENCH_NOTICE_URL: listener.noticeUrl, RIVET_API_ENDPOINT: listener.base, RIVET_TOKEN: 'bench', RIVET_LOBBY_ID: id };
  const t0 = performance.now();
  const child = spawn(command, { shell: true, cwd: workDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const closed = new Promise((resolve) => child.once('close', resolve));
  child.stdout.resume();
  child.stderr.resume();
  const notice = await listener.notice(id);
  await closed;
  if (notice.status !== 200) throw new Error(`the bare spawn's ready call answered ${notice.status}`);
  return notice.at - t0;
}

/** A lobby of `mode` created on serve; its id. */
async function createLobby(info, mode) {
  const created = await call(info.endpoint, 'POST', '/matchmaker/lobbies/create', { token: info.tokens.public, body: { game_mode: mode } });
  return created.lobby.lobby_id;
}

/** Under serve: from the create request sent to the server's notice; resolves once its exit is recorded. */
async function served(listener, info) {
  const t0 = performance.now();
  const id = await createLobby(info, 'default');
  const notice = await listener.notice(id);
  if (notice.status !== 200) throw new Error(`lobby ${id}: its server's ready call answered ${notice.status}`);
  // The next run starts once this lobby stopped by its server's exit, so no two overlap.
  const lobbyPath = `/cloud/games/${info.game_id}/namespaces/${info.namespace_id}/logs/lobbies/${id}`;
  while ((await call(info.endpoint, 'GET', lobbyPath, { token: info.tokens.cloud })).lobby.status.stopped === undefined)
    await new Promise((resolve) => setTimeout(resolve, 10));
  return notice.at - t0;
}

/** serve's resident memory (bytes) and open descriptors (their targets, sorted), from /proc. */
function resources(pid) {
  const kb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
  const fds = [];
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      fds.push(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
    } catch {
      // Closed between the listing and the read: not open.
    }
  }
  return { rss: kb * 1024, fds: fds.sort() };
}

// A server's process's /proc/<pid>/stat, which serve keeps open between its CPU readings (pidusage).
const READING = /^\/proc\/\d+\/stat$/;
// pidusage closes a reading 15 s after it was last read, on a timer of half that: 22.5 s at most, and some spare.
const READINGS_CLOSED_MS = 40_000;

/**
 * Waits until serve holds no reading of a process open (every server it ran has stopped, so each closes once
 * unread for long enough); the seconds it took. Throws past READINGS_CLOSED_MS: those are left open.
 */
async function released(pid) {
  const t0 = performance.now();
  for (;;) {
    const held = resources(pid).fds.filter((fd) => READING.test(fd));
    if (held.length === 0) return (performance.now() - t0) / 1000;
    if (performance.now() - t0 > READINGS_CLOSED_MS) throw new Error(`emulator serve still holds ${held.length} readings of processes open (${held.slice(0, 3).join(', ')} …) ${READINGS_CLOSED_MS / 1000} s after its servers stopped`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Waits until IDLE_COLLECT_MS and a second have passed since `lastCall` (a performance.now() time). */
async function atRest(lastCall) {
  const left = lastCall + IDLE_COLLECT_MS + 1_000 - performance.now();
  if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
}

/** What is in `a` and not in `b` (multisets of descriptor targets). */
function minus(a, b) {
  const left = [...b];
  return a.filter((x) => {
    const i = left.indexOf(x);
    if (i === -1) return true;
    left.splice(i, 1);
    return false;
  });
}

export async function runRuntimeBench() {
  if (process.platform !== 'linux') {
    console.log('runtime: skipped, it reads emulator serve\'s memory and descriptors from /proc (Linux only)');
    return true;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gamehost-bench-runtime-'));
  const listener = await noticeListener();
  let server;
  let ok = true;
  try {
    const script = path.join(dir, 'server.cjs');
    fs.writeFileSync(script, SERVER_SCRIPT);
    const readyCommand = `"${process.execPath}" "${script}"`;
    // The churn's server: a shell and two children, all three pids printed and passed on with the notice.
    const churnCommand = `sleep 300 & a=$!; sleep 300 & b=$!; printf '%s\\n' $$ $a $b; "${process.execPath}" "${script}" $$ $a $b; wait`;
    const configFile = path.join(dir, 'emulator.json');
    fs.writeFileSync(
      configFile,
      JSON.stringify({
        gameModes: ['default', 'churn'],
        gameModeSettings: { churn: { run: churnCommand } },
        startDelayMs: 0,
        readyDelayMs: 0,
        // Lobbies run one at a time here; a few places spare for a stopped one whose exit is still being recorded.
        maxRunningLobbies: 4,
      }),
    );
    const bareDir = path.join(dir, 'bare');
    fs.mkdirSync(bareDir);
    server = await serve(path.join(dir, 'data'), configFile, readyCommand, { BENCH_NOTICE_URL: listener.noticeUrl });
    const atStart = resources(server.pid);
    const { info } = server;

    const times = { bare: [], served: [] };
    await bare(listener, readyCommand, 'warm', bareDir);
    await served(listener, info);
    for (let i = 0; i < RUNS; i++) {
      times.bare.push(await bare(listener, readyCommand, i, bareDir));
      times.served.push(await served(listener, info));
    }
    const ratio = median(times.served) / median(times.bare);
    const readyOk = ratio <= READY_BUDGET;
    ok &&= readyOk;
    console.log(`runtime, a server's ready call (${RUNS} runs each, in turn, median time to its notice after the answer):`);
    console.log(`  bare spawn through the shell       ${median(times.bare).toFixed(1).padStart(7)} ms`);
    console.log(
      `  emulator serve --run, from create  ${median(times.served).toFixed(1).padStart(7)} ms  ${ratio.toFixed(2)}x  ${readyOk ? 'ok' : 'OVER BUDGET'} (budget ${READY_BUDGET}x)`,
    );

    // Churn: each lobby created, its server's notice awaited (ready, its three pids), stopped; none may outlive its stop.
    const pids = [];
    let outlived = 0;
    const churn = async (count) => {
      for (let i = 0; i < count; i++) {
        const id = await createLobby(info, 'churn');
        const notice = await listener.notice(id);
        if (notice.status !== 200 || notice.pids.length !== 3) throw new Error(`lobby ${id}: ready answered ${notice.status}, pids ${notice.pids.join(' ')}`);
        pids.push(...notice.pids);
        await call(info.endpoint, 'POST', `/_emulator/lobbies/${id}/stop`, { body: {} });
        outlived += notice.pids.filter(isRunning).length;
      }
    };
    await churn(WARM_UP);
    const lastCall = performance.now();
    await released(server.pid);
    // At rest, as the reading after them is: the bench's keep-alive connections to serve closed by its
    // keepAliveTimeout (5 s) and its idle collection done. Read at once, it held one socket the reading after did not.
    await atRest(lastCall);
    const before = resources(server.pid);
    const t0 = performance.now();
    await churn(CHURN);
    const seconds = (performance.now() - t0) / 1000;
    const releasedIn = await released(server.pid);
    // And after serve's idle collection, whichever comes last.
    await atRest(t0 + seconds * 1000);
    const after = resources(server.pid);
    const left = pids.filter(isRunning);
    const rssRatio = after.rss / atStart.rss;
    const sameFds = after.fds.length === before.fds.length && minus(after.fds, before.fds).length === 0;
    const churnOk = pids.length === (CHURN + WARM_UP) * 3 && outlived === 0 && left.length === 0 && sameFds && rssRatio <= RSS_BUDGET;
    ok &&= churnOk;
    console.log(`runtime, ${CHURN} lobbies created, ready and stopped in a row on emulator serve (${seconds.toFixed(1)} s):`);
    console.log(`  processes started ${pids.length}, running after their stop answered ${outlived}, running at the end ${left.length}`);
    console.log(`  serve's open descriptors ${before.fds.length} -> ${after.fds.length} (its last readings of the servers' /proc stat closed ${releasedIn.toFixed(1)} s after the last stop)`);
    if (!sameFds) {
      for (const fd of minus(after.fds, before.fds)) console.log(`    opened: ${fd}`);
      for (const fd of minus(before.fds, after.fds)) console.log(`    closed: ${fd}`);
    }
    const warmed = WARM_UP > 0 ? `, after ${WARM_UP} lobbies for warm-up ${(before.rss / 2 ** 20).toFixed(1)} MiB` : '';
    console.log(
      `  serve's RSS at its start ${(atStart.rss / 2 ** 20).toFixed(1)} MiB${warmed}, after the ${CHURN} lobbies ${(after.rss / 2 ** 20).toFixed(1)} MiB  ${rssRatio.toFixed(2)}x  ${churnOk ? 'ok' : 'OVER BUDGET'} (budget: none left, same descriptors, RSS ${RSS_BUDGET}x its start)`,
    );
  } finally {
    await server?.stop();
    await listener.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return ok;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = (await runRuntimeBench()) ? 0 : 1;
