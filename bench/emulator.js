// Emulator budget: at least 2,000 lobby-create requests per second from one `gamehost emulator serve` process.
// The server runs in a child process (one event loop, one core) so autocannon's load does not share its loop.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createLoad, namespaceTokens } from './namespaces.js';

const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'gamehost.js');
const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const BUDGET_RPS = 2000;

// Creates spread over namespaces: one runs at most 128 lobbies (production's lobby_count_max), and a run makes 30,000.
const NAMESPACES = 512;

export async function runEmulatorBench() {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gamehost-bench-'));
  const server = spawn(process.execPath, [BIN, 'emulator', 'serve', '--port', '0', '--json', '--quiet', '--data-dir', dataDir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => server.once('exit', resolve));
  try {
    const line = await new Promise((resolve, reject) => {
      readline.createInterface({ input: server.stdout }).once('line', resolve);
      server.once('exit', (code) => reject(new Error(`gamehost emulator serve exited ${code} before it listened`)));
    });
    const info = JSON.parse(line);
    const tokens = await namespaceTokens(info, NAMESPACES);
    const load = (duration) => createLoad(info.endpoint, { tokens, connections: CONNECTIONS, duration });
    // A short warm-up (JIT, SQLite page cache), then the measured run.
    await load(2);
    const r = await load(DURATION_S);
    const ok = r.requests.average >= BUDGET_RPS && r.non2xx === 0 && r.errors === 0 && r.timeouts === 0;
    console.log(`emulator lobby create (${CONNECTIONS} connections, ${DURATION_S} s, server in its own process):`);
    console.log(
      `  ${r.requests.average.toFixed(0).padStart(6)} req/s  p50 ${r.latency.p50} ms  p99 ${r.latency.p99} ms  ` +
        `${r.requests.total} requests, ${r.non2xx} non-2xx, ${r.errors} errors` +
        (ok ? `  ok (budget ${BUDGET_RPS} req/s)` : `  UNDER BUDGET (${BUDGET_RPS} req/s)`),
    );
    return ok;
  } finally {
    server.kill('SIGTERM');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = (await runEmulatorBench()) ? 0 : 1;
