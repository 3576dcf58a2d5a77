// Runtime budgets. (1) A lobby's server started by the runtime (startLobbyServer: its working directory, the
// process group, output to the log batcher) reaches its ready marker (an HTTP request it makes to a listener here)
// within 1.5x the time the same command takes under a bare child_process.spawn through the shell; the two run in
// turn (A B A B …), medians compared. (2) 100 lobbies' servers (each a shell with two children) started and stopped
// in a row leave no process, no file descriptor and no memory behind: none of the pids they printed runs after
// them, the same number of open descriptors, and RSS within 1.2x of what it was after a warm-up.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const { startLobbyServer } = await import(new URL('../dist/emulator/runtime/lobby.js', import.meta.url).href);
const { isRunning } = await import(new URL('../dist/emulator/runtime/process.js', import.meta.url).href);

const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const CHURN = Number(process.env.BENCH_RUNTIME_CHURN ?? 100);
const READY_BUDGET = 1.5;
const RSS_BUDGET = 1.2;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** A listener that resolves the waiter of each ready marker (`/ready/<n>`) as it arrives. */
async function readyListener() {
  const waiting = new Map();
  const server = http.createServer((req, res) => {
    res.end('ok');
    waiting.get(req.url)?.();
    waiting.delete(req.url);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    port,
    expect: (n) => new Promise((resolve) => waiting.set(`/ready/${n}`, resolve)),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

const readyCommand = (port, n) =>
  `"${process.execPath}" -e "require('http').get('http://127.0.0.1:${port}/ready/${n}', (r) => r.resume())"`;

const noLogs = { append: async () => {} };

async function bare(listener, n, workDir) {
  const arrived = listener.expect(n);
  const t0 = performance.now();
  const child = spawn(readyCommand(listener.port, n), { shell: true, cwd: workDir, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.resume();
  child.stderr.resume();
  await arrived;
  const ms = performance.now() - t0;
  await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('close', resolve)));
  return ms;
}

async function runtime(listener, n, workRoot) {
  const arrived = listener.expect(n);
  const t0 = performance.now();
  const run = await startLobbyServer({ lobbyId: `bench-${n}`, env: {}, ports: [], run: { command: readyCommand(listener.port, n) }, workRoot, logs: noLogs });
  await arrived;
  const ms = performance.now() - t0;
  await run.exited;
  return ms;
}

const openFds = () => (fs.existsSync('/proc/self/fd') ? fs.readdirSync('/proc/self/fd').length : undefined);

export async function runRuntimeBench() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gamehost-bench-runtime-'));
  let ok = true;
  try {
    const listener = await readyListener();
    const times = { bare: [], runtime: [] };
    await bare(listener, 'warm-a', dir);
    await runtime(listener, 'warm-b', dir);
    for (let i = 0; i < RUNS; i++) {
      times.bare.push(await bare(listener, `a${i}`, dir));
      times.runtime.push(await runtime(listener, `b${i}`, dir));
    }
    await listener.close();
    const ratio = median(times.runtime) / median(times.bare);
    const readyOk = ratio <= READY_BUDGET;
    ok &&= readyOk;
    console.log(`runtime, ready marker (${RUNS} runs each, in turn, median time to the server's request):`);
    console.log(`  bare spawn through the shell      ${median(times.bare).toFixed(1).padStart(7)} ms`);
    console.log(
      `  startLobbyServer, same command    ${median(times.runtime).toFixed(1).padStart(7)} ms  ${ratio.toFixed(2)}x  ${readyOk ? 'ok' : 'OVER BUDGET'} (budget ${READY_BUDGET}x)`,
    );

    // Churn: a warm-up, then the baseline, then CHURN starts and stops.
    // Each server prints its own pid and its children's; each is stopped once all three are printed.
    const pids = [];
    const churn = async (count, tag) => {
      for (let i = 0; i < count; i++) {
        let printed;
        const three = new Promise((resolve) => (printed = resolve));
        let mine = 0;
        const logs = {
          append: async (_lobby, _stream, lines) => {
            pids.push(...lines.map((l) => Number(l.toString())));
            if ((mine += lines.length) >= 3) printed();
          },
        };
        const run = await startLobbyServer({
          lobbyId: `${tag}-${i}`,
          env: {},
          ports: [],
          run: { command: `sleep 300 & a=$!; sleep 300 & printf '%s\\n' $$ $a $!; wait` },
          workRoot: dir,
          logs,
        });
        await three;
        await run.stop(2_000);
      }
    };
    await churn(10, 'warm');
    globalThis.gc?.();
    const before = { rss: process.memoryUsage().rss, fds: openFds() };
    const t0 = performance.now();
    await churn(CHURN, 'churn');
    const seconds = (performance.now() - t0) / 1000;
    globalThis.gc?.();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const after = { rss: process.memoryUsage().rss, fds: openFds(), left: pids.filter(isRunning) };
    const rssRatio = after.rss / before.rss;
    const churnOk = pids.length === (CHURN + 10) * 3 && after.left.length === 0 && after.fds === before.fds && rssRatio <= RSS_BUDGET;
    ok &&= churnOk;
    console.log(`runtime, ${CHURN} lobbies' servers started and stopped in a row (${seconds.toFixed(1)} s):`);
    console.log(`  processes started ${pids.length}, still running ${after.left.length}; open descriptors ${before.fds ?? '?'} -> ${after.fds ?? '?'}`);
    console.log(
      `  RSS ${(before.rss / 2 ** 20).toFixed(1)} -> ${(after.rss / 2 ** 20).toFixed(1)} MiB  ${rssRatio.toFixed(2)}x  ${churnOk ? 'ok' : 'OVER BUDGET'} (budget: none left, same descriptors, ${RSS_BUDGET}x RSS)`,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return ok;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = (await runRuntimeBench()) ? 0 : 1;
