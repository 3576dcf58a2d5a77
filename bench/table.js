// Table budget: `history export --format table` of 200,000 rows on a terminal (a pseudo-terminal from `script`)
// within 3x the wall time of the same export as CSV to a pipe, which writes the bytes and nothing else. Before the
// streaming renderer, cli-table3 laid out 4,000 rows in 2 s and did not finish 50,000 in 60 s.
import { spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'gamehost.js');
const ROWS = Number(process.env.BENCH_ROWS ?? 200_000);
const RUNS = Number(process.env.BENCH_RUNS_TABLE ?? 3);
const BUDGET = 3;
const COLUMNS =
  'lobby_id,namespace_id,namespace_name,region_id,region_name,tier_name,version_id,version_name,lobby_group_id,lobby_group_name,start_ts,stop_ts,total_uptime_ms,query_uptime_ms';

function csv() {
  const ns = '66666666-7777-4888-9999-000000000000';
  const lines = [COLUMNS];
  for (let i = 0; i < ROWS; i++) {
    const id = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
    const start = 1763700000000 + i * 1000;
    lines.push(`${id},${ns},prod,lnd-atl,Atlanta,basic,v,v1,g,${['default', 'duos', 'squads'][i % 3]},${start},${i % 5 ? start + 60000 : ''},60000,60000`);
  }
  return Buffer.from(lines.join('\n') + '\n');
}

/** The two routes an export takes: the export call, and the presigned CSV. */
async function serve(body) {
  const server = http.createServer((req, res) => {
    req.resume();
    if (req.url.endsWith('/export-history')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ url: `http://127.0.0.1:${server.address().port}/export.csv` }));
    }
    res.writeHead(200, { 'content-type': 'text/csv', 'content-length': body.length });
    res.end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

function run(command, env) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn('sh', ['-c', command], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => (code === 0 ? resolve(Number(process.hrtime.bigint() - t0) / 1e6) : reject(new Error(`${command}: exit ${code} ${err}`))));
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1];

export async function runTableBench() {
  if (spawnSync('script', ['--version']).status !== 0) {
    console.log('table: skipped (needs `script` from util-linux for a pseudo-terminal)');
    return true;
  }
  const server = await serve(csv());
  const env = {
    ...process.env,
    GAMEHOST_ENDPOINT: `http://127.0.0.1:${server.address().port}`,
    GAMEHOST_TOKEN: 'bench',
    GAMEHOST_GAME: '11111111-2222-4333-8444-555555555555',
    GAMEHOST_NAMESPACE: '66666666-7777-4888-9999-000000000000',
  };
  const args = `"${process.execPath}" "${BIN}" history export --since 1h --utc`;
  const commands = {
    'csv to a pipe': `${args} -o - > /dev/null`,
    'table on a terminal': `script -qec 'stty cols 120; ${args} --format table' /dev/null > /dev/null`,
  };
  const times = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
  try {
    for (let i = 0; i < RUNS; i++) for (const [name, c] of Object.entries(commands)) times[name].push(await run(c, env));
  } finally {
    server.close();
  }
  const base = median(times['csv to a pipe']);
  const ratio = median(times['table on a terminal']) / base;
  const ok = ratio <= BUDGET;
  console.log(`table (${ROWS.toLocaleString('en-US')} rows, ${RUNS} runs each, median wall time):`);
  for (const [name, t] of Object.entries(times)) console.log(`  ${name.padEnd(20)} ${median(t).toFixed(0).padStart(7)} ms`);
  console.log(`  table / csv          ${ratio.toFixed(2)}x  ${ok ? 'ok' : 'OVER BUDGET'} (budget ${BUDGET}x)`);
  return ok;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = (await runTableBench()) ? 0 : 1;
