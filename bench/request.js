// One-request budget: `gamehost stats --json` against `gamehost emulator serve` uses at most 2.2x the CPU
// (user + system, whole process) of a bare node:http script making the same request. Each sample is a batch of
// runs under one `/usr/bin/time` (BENCH_REQUEST_BATCH, 20), whose children's CPU it adds up: a process here costs
// 20-100 ms, and time prints hundredths of a second, each rounded down, which alone would move one run's figure
// by up to a third. Batches alternate (BENCH_REQUEST_RUNS, 7 of each); medians per run.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'gamehost.js');
const RUNS = Number(process.env.BENCH_REQUEST_RUNS ?? 7);
const BUDGET = 2.2;
const TIME = '/usr/bin/time';

// The same request the CLI makes, with node:http and nothing else: the floor a Node program cannot go below.
const BARE = `
const http = require('node:http');
const u = new URL('/matchmaker/players/statistics', process.env.GAMEHOST_ENDPOINT);
http.get(u, { headers: { authorization: 'Bearer ' + process.env.GAMEHOST_NAMESPACE_TOKEN, accept: 'application/json' } }, (res) => {
  let text = '';
  res.setEncoding('utf8');
  res.on('data', (c) => (text += c));
  res.on('end', () => process.stdout.write(JSON.stringify(JSON.parse(text), null, 2) + '\\n'));
});
`;

// Not a budget: the least any ES-module CLI built on the design's commander and undici can cost for this request.
// One module loads commander, and undici exactly as the CLI does (dist/api/agents.js: two of undici's files, its
// HTTP/2 connector stood in for, --liftoff-only); commander parses `stats --json` for a program of that one
// command, whose action makes the request and prints the JSON. Nothing else of the CLI.
const FLOOR = `
import { createRequire } from 'node:module';
const { Agents, request } = await import(${JSON.stringify(new URL('../dist/api/agents.js', import.meta.url).href)});
const { Command } = createRequire(${JSON.stringify(fileURLToPath(new URL('../package.json', import.meta.url)))})('commander');
const program = new Command('floor');
program.command('stats').option('--json').action(async () => {
  const u = new URL('/matchmaker/players/statistics', process.env.GAMEHOST_ENDPOINT);
  const agents = new Agents(process.env, 30000);
  const headers = { authorization: 'Bearer ' + process.env.GAMEHOST_NAMESPACE_TOKEN, accept: 'application/json' };
  const res = await request(agents.for(u), { origin: u.origin, path: u.pathname, method: 'GET', headers });
  if (res.statusCode !== 200) throw new Error('answered ' + res.statusCode);
  process.stdout.write(JSON.stringify(await res.body.json(), null, 2) + '\\n');
  await agents.close();
});
await program.parseAsync(['stats', '--json'], { from: 'user' });
`;

const BATCH = Number(process.env.BENCH_REQUEST_BATCH ?? 20);

/** CPU seconds (user + system) of one run: the mean of a batch of BATCH runs under one GNU time. */
function cpu(args, env) {
  const loop = 'i=0; while [ $i -lt "$0" ]; do "$@" >/dev/null || exit 1; i=$((i+1)); done';
  const r = spawnSync(TIME, ['-f', '@@ %U %S', 'sh', '-c', loop, String(BATCH), process.execPath, ...args], { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  const [user, sys] = r.stderr.split('\n').reverse().find((l) => l.startsWith('@@ ')).slice(3).split(' ').map(Number);
  return (user + sys) / BATCH;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export async function runRequestBench() {
  if (!fs.existsSync(TIME)) {
    console.log('one request: skipped, /usr/bin/time is not installed');
    return true;
  }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gamehost-bench-'));
  const server = spawn(process.execPath, [BIN, 'emulator', 'serve', '--port', '0', '--json', '--quiet', '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => server.once('exit', resolve));
  try {
    const info = JSON.parse(await new Promise((resolve) => readline.createInterface({ input: server.stdout }).once('line', resolve)));
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gamehost-bench-home-'));
    const env = {
      PATH: process.env.PATH,
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, 'config'),
      GAMEHOST_ENDPOINT: info.endpoint,
      GAMEHOST_NAMESPACE_TOKEN: info.tokens.public,
    };
    const runs = { bare: [], floor: [], stats: [] };
    const bare = () => cpu(['-e', BARE], env);
    const floor = () => cpu(['--input-type=module', '-e', FLOOR], env);
    const stats = () => cpu([BIN, 'stats', '--json'], env);
    bare();
    floor();
    stats(); // warm the page cache
    for (let i = 0; i < RUNS; i++) {
      runs.bare.push(bare());
      runs.floor.push(floor());
      runs.stats.push(stats());
    }
    const ratio = median(runs.stats) / median(runs.bare);
    const ok = ratio <= BUDGET;
    const range = (xs) => `${Math.min(...xs).toFixed(3)}–${Math.max(...xs).toFixed(3)}`;
    console.log(`one request (${RUNS} batches of ${BATCH} runs each, alternating, median CPU-s per run, user + system; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}):`);
    console.log(`  node:http script             ${median(runs.bare).toFixed(3)} s  (${range(runs.bare)})`);
    console.log(`  commander + undici, no CLI   ${median(runs.floor).toFixed(3)} s  (${range(runs.floor)})  ${(median(runs.floor) / median(runs.bare)).toFixed(2)}x  (the floor, not a budget)`);
    console.log(`  gamehost stats --json        ${median(runs.stats).toFixed(3)} s  (${range(runs.stats)})  ${ratio.toFixed(2)}x  ${ok ? 'ok' : 'OVER BUDGET'} (budget ${BUDGET}x)`);
    fs.rmSync(home, { recursive: true, force: true });
    return ok;
  } finally {
    server.kill('SIGTERM');
    await exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = (await runRequestBench()) ? 0 : 1;
