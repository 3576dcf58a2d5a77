// Upload budgets (issue 9), on the committed local discard server:
// - 1 GiB of random bytes: `build push` against the same job done by standard tools, `curl -T` and
//   `openssl dgst -sha256` of the same file run side by side; alternating, BENCH_UPLOAD_RUNS (3) runs each.
//   Wall time and CPU-seconds (user + system of the push process; of curl and openssl together) at most 1.25x theirs.
// - Peak RSS at most 150 MiB at 1 GiB and at 4 GiB.
// - A push refused at its first part (S3's 403) on the 1 GiB file: at most 0.6 CPU-seconds (median of three).
// - Through a server that reads each connection at 20 MiB/s, a 200 MiB push takes at most a fifth of
//   `curl -T`'s time at the default concurrency. The server lays out 25 MiB parts here: with the service's
//   100 MiB parts a 200 MiB file has two, and no client can beat half of curl's time on it.
// CPU-seconds hold up on a busy machine; wall times taken while other work runs are noisy.
import { spawn } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { BENCH_CACHE } from './cache.js';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin', 'gamehost.js');
const DIR = BENCH_CACHE;
const MiB = 1024 ** 2;
const GiB = 1024 ** 3;
const RUNS = Number(process.env.BENCH_UPLOAD_RUNS ?? 3);
const BUDGET = { wallRatio: 1.25, cpuRatio: 1.25, rssMiB: 150, refusedCpu: 0.6, slowRatio: 0.2 };
const TIME = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;

export function makeFile(file, size, random) {
  if (fs.existsSync(file) && fs.statSync(file).size === size) return;
  if (!random) {
    fs.closeSync(fs.openSync(file, 'w'));
    fs.truncateSync(file, size); // sparse: the RSS check needs the size, not the entropy
    return;
  }
  const fd = fs.openSync(file, 'w');
  const block = Buffer.alloc(16 * MiB);
  for (let written = 0; written < size; written += block.length) fs.writeSync(fd, randomFillSync(block), 0, Math.min(block.length, size - written));
  fs.closeSync(fd);
}

/** Runs one command; resolves with wall ms and (with GNU time) its CPU seconds and peak RSS in MiB. */
export function measure(cmd, args, { ok = [0] } = {}) {
  const argv = TIME ? [TIME, ['-f', '@@ %U %S %M', cmd, ...args]] : [cmd, args];
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv[1], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c) => (err += c));
    child.on('exit', (code) => {
      const ms = performance.now() - t0;
      const line = err.split('\n').reverse().find((l) => l.startsWith('@@ '));
      if (TIME && line) {
        const [user, sys, rss] = line.slice(3).split(' ').map(Number);
        code = Number(/Command exited with non-zero status (\d+)/.exec(err)?.[1] ?? code);
        if (!ok.includes(code)) return reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err.slice(-2000)}`));
        return resolve({ ms, cpu: user + sys, user, sys, rssMiB: rss / 1024 });
      }
      if (!ok.includes(code)) return reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err.slice(-2000)}`));
      resolve({ ms, cpu: NaN, user: NaN, sys: NaN, rssMiB: NaN });
    });
  });
}

/** The standard tools' way: upload and hash at once; wall time until both are done, CPU of both. */
async function sideBySide(file, endpoint) {
  const t0 = performance.now();
  const [up, hash] = await Promise.all([measure('curl', ['-sS', '-o', '/dev/null', '-T', file, `${endpoint}/curl`]), measure('openssl', ['dgst', '-sha256', file])]);
  return { ms: performance.now() - t0, cpu: up.cpu + hash.cpu };
}

async function startServer(args = []) {
  const server = spawn(process.execPath, [path.join(ROOT, 'bench', 'discard-server.js'), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve) => readline.createInterface({ input: server.stdout }).once('line', resolve));
  return { endpoint: `http://127.0.0.1:${port}`, stop: () => server.kill('SIGTERM') };
}

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const verdict = (ok) => (ok ? 'ok' : 'OVER BUDGET');

export async function runUploadBench() {
  for (const tool of ['curl', 'openssl']) {
    if (spawnable(tool)) continue;
    console.log(`upload: skipped, ${tool} is not installed`);
    return true;
  }
  fs.mkdirSync(DIR, { recursive: true });
  const oneGiB = path.join(DIR, 'build-1g.bin');
  const fourGiB = path.join(DIR, 'build-4g.bin');
  const slowFile = path.join(DIR, 'build-200m.bin');
  makeFile(oneGiB, GiB, true);
  makeFile(fourGiB, 4 * GiB, false);
  makeFile(slowFile, 200 * MiB, true);

  let run = 0;
  const push = (file, endpoint, tag = `bench:run-${++run}`) => [
    process.execPath,
    [BIN, 'build', 'push', file, '--tag', tag, '--endpoint', endpoint, '--token', 'bench', '--game', '00000000-0000-4000-8000-000000000000', '--no-resume', '--progress', 'none', '--json'],
  ];
  const fast = await startServer();
  const slow = await startServer(['--read-rate', String(20 * MiB), '--part-size', String(25 * MiB)]);
  try {
    await measure(...push(oneGiB, fast.endpoint)); // warm the page cache and the server
    await sideBySide(oneGiB, fast.endpoint);
    const ours = [];
    const theirs = [];
    for (let i = 1; i <= RUNS; i++) {
      ours.push(await measure(...push(oneGiB, fast.endpoint)));
      theirs.push(await sideBySide(oneGiB, fast.endpoint));
    }
    const big = await measure(...push(fourGiB, fast.endpoint));
    // Three runs: what it costs is mostly how far the hash gets before the refusal arrives, which one busy moment moves.
    const refusals = [];
    for (let i = 0; i < 3; i++) refusals.push(await measure(...push(oneGiB, fast.endpoint, 'refuse:first-part'), { ok: [7] }));
    const refused = { cpu: median(refusals.map((r) => r.cpu)) };
    const slowPush = await measure(...push(slowFile, slow.endpoint));
    const slowCurl = await measure('curl', ['-sS', '-o', '/dev/null', '-T', slowFile, `${slow.endpoint}/curl`]);

    const wall = median(ours.map((x) => x.ms));
    const wallTheirs = median(theirs.map((x) => x.ms));
    const ratio = wall / wallTheirs;
    const cpu = median(ours.map((x) => x.cpu));
    const cpuTheirs = median(theirs.map((x) => x.cpu));
    const rss1 = Math.max(...ours.map((x) => x.rssMiB));
    const slowRatio = slowPush.ms / slowCurl.ms;
    const checks = {
      ratio: ratio <= BUDGET.wallRatio,
      cpu: !TIME || cpu / cpuTheirs <= BUDGET.cpuRatio,
      rss: !TIME || (rss1 <= BUDGET.rssMiB && big.rssMiB <= BUDGET.rssMiB),
      refused: !TIME || refused.cpu <= BUDGET.refusedCpu,
      slow: slowRatio <= BUDGET.slowRatio,
    };
    const f = (ms) => `${(ms / 1000).toFixed(2)} s`.padStart(8);
    console.log(`upload (1 GiB of random bytes, ${RUNS} runs each, alternating, medians; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}):`);
    console.log(`  gamehost build push          ${f(wall)}  ${cpu.toFixed(2)} CPU-s (${median(ours.map((x) => x.user)).toFixed(2)} user + ${median(ours.map((x) => x.sys)).toFixed(2)} sys)  peak RSS ${rss1.toFixed(0)} MiB`);
    console.log(`  curl -T + openssl dgst       ${f(wallTheirs)}  ${cpuTheirs.toFixed(2)} CPU-s`);
    console.log(`  wall ratio push/theirs       ${ratio.toFixed(2)}x  ${verdict(checks.ratio)} (budget ${BUDGET.wallRatio}x)`);
    console.log(`  CPU ratio push/theirs        ${(cpu / cpuTheirs).toFixed(2)}x  ${verdict(checks.cpu)} (budget ${BUDGET.cpuRatio}x)`);
    console.log(`  push 4 GiB                   ${f(big.ms)}  peak RSS ${big.rssMiB.toFixed(0)} MiB  ${verdict(checks.rss)} (budget ${BUDGET.rssMiB} MiB at 1 and 4 GiB)`);
    console.log(`  first part refused, 1 GiB    ${refused.cpu.toFixed(2)} CPU-s (median of 3)  ${verdict(checks.refused)} (budget ${BUDGET.refusedCpu} s)`);
    console.log(`  200 MiB at 20 MiB/s per connection: push ${f(slowPush.ms)}, curl -T ${f(slowCurl.ms)}, ratio ${slowRatio.toFixed(2)}  ${verdict(checks.slow)} (budget ${BUDGET.slowRatio})`);
    return Object.values(checks).every(Boolean);
  } finally {
    fast.stop();
    slow.stop();
  }
}

export function spawnable(cmd) {
  try {
    return fs.existsSync(cmd) || process.env.PATH.split(path.delimiter).some((d) => fs.existsSync(path.join(d, cmd)));
  } catch {
    return false;
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = (await runUploadBench()) ? 0 : 1;
