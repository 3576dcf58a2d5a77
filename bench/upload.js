// Upload budget: `build push` of a 1 GiB file to a local discard server takes at most 1.0x the wall time of
// `curl -T` of the same file to the same server, and the CLI's peak RSS stays at or under 150 MiB for 1 GiB
// and 4 GiB files. Runs push and curl in turn (A B A B …) and compares medians.
import { spawn, spawnSync } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin', 'gamehost.js');
const DIR = path.join(ROOT, '.bench');
const GiB = 1024 ** 3;
const RUNS = Number(process.env.BENCH_UPLOAD_RUNS ?? 3);
const RATIO_BUDGET = 1.0;
const RSS_BUDGET_MIB = 150;
const TIME = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;

function makeFile(file, size, random) {
  if (fs.existsSync(file) && fs.statSync(file).size === size) return;
  if (!random) {
    fs.closeSync(fs.openSync(file, 'w'));
    fs.truncateSync(file, size); // sparse: the RSS check needs the size, not the entropy
    return;
  }
  const fd = fs.openSync(file, 'w');
  const block = Buffer.alloc(16 * 1024 * 1024);
  for (let written = 0; written < size; written += block.length) fs.writeSync(fd, randomFillSync(block), 0, Math.min(block.length, size - written));
  fs.closeSync(fd);
}

/** Wall ms and (on Linux) peak RSS in MiB of one command. */
function timed(cmd, args) {
  const argv = TIME ? [TIME, ['-f', '%M', cmd, ...args]] : [cmd, args];
  const t0 = process.hrtime.bigint();
  const r = spawnSync(argv[0], argv[1], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(-2000)}`);
  const rssKiB = TIME ? Number(r.stderr.trim().split('\n').at(-1)) : NaN;
  return { ms, rssMiB: rssKiB / 1024 };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export async function runUploadBench() {
  if (!spawnSync('curl', ['--version']).stdout) {
    console.log('upload: skipped, curl is not installed');
    return true;
  }
  fs.mkdirSync(DIR, { recursive: true });
  const oneGiB = path.join(DIR, 'build-1g.bin');
  const fourGiB = path.join(DIR, 'build-4g.bin');
  makeFile(oneGiB, GiB, true);
  makeFile(fourGiB, 4 * GiB, false);

  const server = spawn(process.execPath, [path.join(ROOT, 'bench', 'discard-server.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve) => readline.createInterface({ input: server.stdout }).once('line', resolve));
  const endpoint = `http://127.0.0.1:${port}`;
  const push = (file, n) => [process.execPath, [BIN, 'build', 'push', file, '--tag', `bench:run-${n}`, '--endpoint', endpoint, '--token', 'bench', '--game', '00000000-0000-4000-8000-000000000000', '--no-resume', '--progress', 'none', '--json']];
  const curl = (file) => ['curl', ['-sS', '-o', '/dev/null', '-T', file, `${endpoint}/curl`]];
  try {
    timed(...push(oneGiB, 0)); // warm the page cache and the server
    timed(...curl(oneGiB));
    const a = [];
    const b = [];
    for (let i = 1; i <= RUNS; i++) {
      a.push(timed(...push(oneGiB, i)));
      b.push(timed(...curl(oneGiB)));
    }
    const big = timed(...push(fourGiB, 99));
    const ratio = median(a.map((x) => x.ms)) / median(b.map((x) => x.ms));
    const rss1 = Math.max(...a.map((x) => x.rssMiB));
    const ok = ratio <= RATIO_BUDGET && (!TIME || (rss1 <= RSS_BUDGET_MIB && big.rssMiB <= RSS_BUDGET_MIB));
    console.log(`upload (1 GiB, ${RUNS} runs each, median wall time; 4 GiB once):`);
    console.log(`  gamehost build push 1 GiB  ${median(a.map((x) => x.ms)).toFixed(0).padStart(6)} ms  peak RSS ${rss1.toFixed(0)} MiB`);
    console.log(`  curl -T 1 GiB              ${median(b.map((x) => x.ms)).toFixed(0).padStart(6)} ms`);
    console.log(`  ratio push/curl            ${ratio.toFixed(2)}x  ${ratio <= RATIO_BUDGET ? 'ok' : 'OVER BUDGET'} (budget ${RATIO_BUDGET}x)`);
    console.log(`  gamehost build push 4 GiB  ${big.ms.toFixed(0).padStart(6)} ms  peak RSS ${big.rssMiB.toFixed(0)} MiB  ${big.rssMiB <= RSS_BUDGET_MIB ? 'ok' : 'OVER BUDGET'} (budget ${RSS_BUDGET_MIB} MiB)`);
    return ok;
  } finally {
    server.kill('SIGTERM');
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = (await runUploadBench()) ? 0 : 1;
