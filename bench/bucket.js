// Bucket budget (issue 16): a 1 GiB push through `emulator serve --bucket` (parts PUT straight to the bucket on
// presigned UploadPart URLs) costs the CLI no more than the same push through `emulator serve` on its local
// store: CPU-seconds of the push process, medians of BENCH_BUCKET_RUNS (3) runs each, alternating; at most 1.15x.
// One run by default: through moto_server a 1 GiB push takes minutes (its PUT, its completion and the emulator's
// read of the object back all run at moto's pace).
// The bucket server's own speed is shown beside it: `curl -T` of the same file to it. The bucket is moto_server
// (Python, in memory), so wall times through it say more about moto than about us; they are shown, not budgeted.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { makeFile, measure, median, spawnable } from './upload.js';
import { BENCH_CACHE } from './cache.js';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin', 'gamehost.js');
const DIR = BENCH_CACHE;
const GiB = 1024 ** 3;
const RUNS = Number(process.env.BENCH_BUCKET_RUNS ?? 3);
const BUDGET_CPU_RATIO = 1.15;
const KEYS = { AWS_ACCESS_KEY_ID: 'bench', AWS_SECRET_ACCESS_KEY: 'bench', AWS_REGION: 'us-east-1' };

/** Spawns a server and resolves with the first line matching `re` on its stdout or stderr, and a stop function. */
async function startServer(cmd, args, env, re) {
  const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const match = await new Promise((resolve, reject) => {
    for (const stream of [child.stdout, child.stderr]) readline.createInterface({ input: stream }).on('line', (l) => re.test(l) && resolve(re.exec(l)));
    child.once('error', reject);
    exited.then((code) => reject(new Error(`${cmd} exited ${code} before it listened`)));
  });
  return { match, stop: () => (child.kill('SIGTERM'), exited) };
}

export async function runBucketBench() {
  for (const tool of ['moto_server', 'curl']) {
    if (spawnable(tool)) continue;
    console.log(`bucket: skipped, ${tool} is not installed`);
    return true;
  }
  fs.mkdirSync(DIR, { recursive: true });
  const file = path.join(DIR, 'build-1g.bin');
  makeFile(file, GiB, true);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gamehost-bench-'));
  const servers = [];
  try {
    const moto = await startServer('moto_server', ['-H', '127.0.0.1', '-p', '0'], {}, /Running on (http:\/\/127\.0\.0\.1:\d+)/);
    servers.push(moto);
    const s3 = moto.match[1];
    await measure('curl', ['-sSf', '-o', '/dev/null', '-X', 'PUT', `${s3}/bench`]);
    const serve = async (name, extra, env) => {
      const s = await startServer(process.execPath, [BIN, 'emulator', 'serve', '--port', '0', '--json', '--data-dir', path.join(tmp, name), ...extra], env, /^\{"endpoint"/);
      servers.push(s);
      return JSON.parse(s.match.input);
    };
    const local = await serve('local', [], {});
    // moto keeps objects in memory and answers a GET of the pushed GiB (the emulator's read of it back at completion)
    // only once it has put the whole object together: seconds on this machine, past the 5 s bound `storeTimeoutMs`
    // sets for a bucket that stops answering. A bucket that is slow by design gets a longer bound, as a studio
    // would give its own.
    const config = path.join(tmp, 'bucket-emulator.json');
    fs.writeFileSync(config, JSON.stringify({ storeTimeoutMs: 120_000 }));
    const bucket = await serve('bucket', ['--bucket', 's3://bench/builds', '--config', config], { ...KEYS, AWS_ENDPOINT_URL: s3 });
    let run = 0;
    const push = (info) => [
      process.execPath,
      [BIN, 'build', 'push', file, '--tag', `bench:run-${++run}`, '--endpoint', info.endpoint, '--token', info.tokens.cloud, '--game', info.game_id, '--no-resume', '--progress', 'none', '--json'],
    ];
    const curl = () => measure('curl', ['-sSf', '-o', '/dev/null', '-T', file, `${s3}/bench/curl-${++run}`]);

    await measure(...push(local)); // warm the page cache and both servers
    const ours = { local: [], bucket: [], curl: [] };
    for (let i = 1; i <= RUNS; i++) {
      ours.local.push(await measure(...push(local)));
      ours.bucket.push(await measure(...push(bucket)));
      ours.curl.push(await curl());
    }
    const cpu = (xs) => median(xs.map((x) => x.cpu));
    const wall = (xs) => median(xs.map((x) => x.ms));
    const ratio = cpu(ours.bucket) / cpu(ours.local);
    const ok = Number.isNaN(ratio) || ratio <= BUDGET_CPU_RATIO;
    const f = (ms) => `${(ms / 1000).toFixed(2)} s`.padStart(8);
    console.log(`bucket (1 GiB of random bytes, ${RUNS} runs each, alternating, medians; load average ${os.loadavg()[0].toFixed(1)}):`);
    console.log(`  push, emulator on local files     ${f(wall(ours.local))}  ${cpu(ours.local).toFixed(2)} CPU-s  peak RSS ${Math.max(...ours.local.map((x) => x.rssMiB)).toFixed(0)} MiB`);
    console.log(`  push, emulator on moto_server     ${f(wall(ours.bucket))}  ${cpu(ours.bucket).toFixed(2)} CPU-s  peak RSS ${Math.max(...ours.bucket.map((x) => x.rssMiB)).toFixed(0)} MiB`);
    console.log(`  curl -T to moto_server            ${f(wall(ours.curl))}  (the bucket server's own speed)`);
    console.log(`  push CPU, bucket / local files    ${ratio.toFixed(2)}x  ${ok ? 'ok' : 'OVER BUDGET'} (budget ${BUDGET_CPU_RATIO}x)`);
    return ok;
  } finally {
    for (const s of servers.reverse()) await s.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = (await runBucketBench()) ? 0 : 1;
