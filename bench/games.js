// Games budget: lobby creates per second into one game while 20 other games are created, filled (lobbies, a
// build, an export) and deleted in a loop stay within 10% of the same load without that churn. The runs alternate
// (plain then churn, then churn then plain, ...) on one `gamehost emulator serve` in its own process; medians are compared.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createLoad, namespaceTokens } from './namespaces.js';

const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'gamehost.js');
const DURATION_S = Number(process.env.BENCH_DURATION ?? 10) / 2;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const PAIRS = Number(process.env.BENCH_PAIRS ?? 4);
const GAMES = 20;
const BUDGET_RATIO = 0.9;
export const ADMIN = 'bench-admin-token-0123456789abcdef';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** One JSON request to the emulator (the admin token by default); throws on an error answer. */
export async function call(endpoint, method, pathname, { token = ADMIN, body } = {}) {
  const res = await fetch(endpoint + pathname, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${pathname}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : {};
}

/** One game's life as a CI job lives it: created, 5 lobbies, a small build pushed, a history export, deleted. */
async function gameLife(endpoint) {
  const game = await call(endpoint, 'POST', '/_emulator/games', { body: { ttl_seconds: 3600 } });
  for (let i = 0; i < 5; i++) await call(endpoint, 'POST', '/matchmaker/lobbies/create', { token: game.tokens.public, body: { game_mode: 'default' } });
  const build = await call(endpoint, 'POST', `/cloud/games/${game.game_id}/builds`, {
    token: game.tokens.cloud,
    body: { display_name: 'bench', image_tag: 'game-server:bench', image_file: { path: 'x.tar', content_length: 4096 } },
  });
  const put = await fetch(build.image_presigned_requests[0].url, { method: 'PUT', body: Buffer.alloc(4096) });
  if (!put.ok) throw new Error(`part PUT: ${put.status}`);
  await call(endpoint, 'POST', `/cloud/uploads/${build.upload_id}/complete`, { token: game.tokens.cloud, body: {} });
  await call(endpoint, 'POST', `/cloud/games/${game.game_id}/matchmaker/lobbies/export-history`, {
    token: game.tokens.cloud,
    body: { query_start: 0, query_end: Date.now() },
  });
  await call(endpoint, 'DELETE', `/_emulator/games/${game.game_id}`);
}

/** 20 games, one after another, spread over `durationS` so the churn lasts the whole run. */
async function churn(endpoint, durationS) {
  const gap = (durationS * 1000) / GAMES;
  for (let i = 0; i < GAMES; i++) {
    const started = Date.now();
    await gameLife(endpoint);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, gap - (Date.now() - started))));
  }
}

// The load's creates go to namespaces of its game in turn: one runs at most 128 lobbies (production's
// lobby_count_max), and the run makes some 60,000.
const NAMESPACES = 1024;

function load(endpoint, tokens, duration) {
  return createLoad(endpoint, { tokens, connections: CONNECTIONS, duration });
}

export async function runGamesBench() {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gamehost-bench-'));
  const server = spawn(process.execPath, [BIN, 'emulator', 'serve', '--port', '0', '--json', '--quiet', '--data-dir', dataDir], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, GAMEHOST_EMULATOR_ADMIN_TOKEN: ADMIN },
  });
  const exited = new Promise((resolve) => server.once('exit', resolve));
  try {
    const line = await new Promise((resolve, reject) => {
      readline.createInterface({ input: server.stdout }).once('line', resolve);
      server.once('exit', (code) => reject(new Error(`gamehost emulator serve exited ${code} before it listened`)));
    });
    const info = JSON.parse(line);
    const { endpoint } = info;
    // The load goes to a created game, so every request also looks its game up.
    const game = await call(endpoint, 'POST', '/_emulator/games', { body: { name: 'load' } });
    const tokens = await namespaceTokens({ ...game, endpoint }, NAMESPACES);
    const seeded = await namespaceTokens(info, NAMESPACES / 8);
    await load(endpoint, tokens, 2);
    const plain = [];
    const churned = [];
    let failures = 0;
    const plainRun = () => load(endpoint, tokens, DURATION_S);
    const churnRun = async () => (await Promise.all([load(endpoint, tokens, DURATION_S), churn(endpoint, DURATION_S * 0.9)]))[0];
    for (let i = 0; i < PAIRS; i++) {
      // Each pair in the other order from the last, so neither side always runs warmer.
      const a = i % 2 === 0 ? await plainRun() : undefined;
      const b = await churnRun();
      const a2 = a ?? (await plainRun());
      plain.push(a2.requests.average);
      churned.push(b.requests.average);
      failures += a2.non2xx + a2.errors + a2.timeouts + b.non2xx + b.errors + b.timeouts;
    }
    // For the record: the same load with the seeded game's token (no game lookup).
    const seededRun = await load(endpoint, seeded, DURATION_S);
    const ratio = median(churned) / median(plain);
    const ok = ratio >= BUDGET_RATIO && failures === 0;
    const fmt = (xs) => xs.map((x) => x.toFixed(0)).join(', ');
    console.log(`emulator lobby create into a created game, ${GAMES} other games created, filled and deleted meanwhile (${CONNECTIONS} connections, ${PAIRS} pairs of ${DURATION_S} s, load ${os.loadavg()[0].toFixed(1)}):`);
    console.log(`  plain ${fmt(plain)} req/s (median ${median(plain).toFixed(0)}); with the churn ${fmt(churned)} req/s (median ${median(churned).toFixed(0)})`);
    console.log(
      `  ratio ${ratio.toFixed(2)}, ${failures} failed requests` +
        (ok ? `  ok (budget ${BUDGET_RATIO})` : `  UNDER BUDGET (${BUDGET_RATIO}, 0 failures)`) +
        `; the seeded game's token: ${seededRun.requests.average.toFixed(0)} req/s`,
    );
    return ok;
  } finally {
    server.kill('SIGTERM');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = (await runGamesBench()) ? 0 : 1;
