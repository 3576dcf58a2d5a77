// Reads that grow with the lobbies budget: what the service reads per request (player statistics; find, which
// writes, is bench/find.js) costs at most 2x more with 10,000 running lobbies in the game
// than with 10. One `gamehost emulator serve` in its own process holds both games (SQLite, then PostgreSQL on an
// embedded server or GAMEHOST_BENCH_DATABASE_URL); each measure is loaded on the small game and the large one in
// turn (S L L S S L …, BENCH_PAIRS pairs) and the medians of their requests per second compared.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { startEmbeddedPostgres } from './embedded-postgres.js';
import { ADMIN, call } from './games.js';

const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'gamehost.js');
const DURATION_S = Number(process.env.BENCH_DURATION ?? 10) / 4;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const PAIRS = Number(process.env.BENCH_PAIRS ?? 4);
const SMALL = 10;
const LARGE = Number(process.env.BENCH_LOBBIES ?? 10_000);
const BUDGET_RATIO = 2;

/**
 * What is measured, each a read of one game (its tokens, its game_id) that must answer 2xx. Find is measured apart
 * (bench/find.js): each find adds a player, so its lobbies are seeded with room for every request.
 */
export const MEASURES = [
  { name: 'player statistics', request: (game) => ({ method: 'GET', path: '/matchmaker/players/statistics', token: game.tokens.public }) },
];

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * A game with `lobbies` running lobbies (at most 32,767) spread over its game modes and regions, each with its creating player in
 * game: admitted by the lobby's server (players/connected with the lobby token) right after the create, as the
 * statistics count connected players (admitted all after every create, the first would outlast the 2-minute
 * registration window on a loaded machine).
 */
async function gameWith(endpoint, lobbies) {
  const game = await call(endpoint, 'POST', '/_emulator/games', { body: { name: `${lobbies} lobbies`, ttl_seconds: 3600 } });
  // Past production's 128 running lobbies a namespace (lobby_count_max): its highest bound, which sets the per-client
  // bounds too (a client here is this host).
  const bound = 32_767;
  await call(endpoint, 'POST', `/cloud/games/${game.game_id}/namespaces/${game.namespace_id}/mm-config`, {
    token: game.tokens.cloud,
    body: { lobby_count_max: bound, max_players: bound },
  });
  const modes = ['default', 'duos', 'squads'];
  const regions = ['lnd-atl', 'lnd-fra', 'lnd-sgp'];
  let n = 0;
  const seed = async () => {
    for (let i = n++; i < lobbies; i = n++) {
      const body = { game_mode: modes[i % 3], region: regions[Math.floor(i / 3) % 3] };
      const seat = await call(endpoint, 'POST', '/matchmaker/lobbies/create', { token: game.tokens.public, body });
      const { env } = await call(endpoint, 'GET', `/_emulator/lobbies/${seat.lobby.lobby_id}/env`);
      await call(endpoint, 'POST', '/matchmaker/players/connected', { token: env.RIVET_TOKEN, body: { player_token: seat.player.token } });
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, seed));
  const counted = (await call(endpoint, 'GET', '/matchmaker/players/statistics', { token: game.tokens.public })).player_count;
  if (counted !== lobbies) throw new Error(`${lobbies} lobbies with their players admitted: the statistics count ${counted}`);
  return game;
}

function load(endpoint, { method, path: pathname, token, body }, duration) {
  return autocannon({
    url: endpoint + pathname,
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    connections: CONNECTIONS,
    duration,
  });
}

async function serve(args) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gamehost-bench-'));
  const server = spawn(process.execPath, [BIN, 'emulator', 'serve', '--port', '0', '--json', '--quiet', '--data-dir', dataDir, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, GAMEHOST_EMULATOR_ADMIN_TOKEN: ADMIN },
  });
  const exited = new Promise((resolve) => server.once('exit', resolve));
  const line = await new Promise((resolve, reject) => {
    readline.createInterface({ input: server.stdout }).once('line', resolve);
    server.once('exit', (code) => reject(new Error(`gamehost emulator serve exited ${code} before it listened`)));
  });
  return {
    endpoint: JSON.parse(line).endpoint,
    async stop() {
      server.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Every measure on one engine; true when each is within the budget with no failed request. */
async function measureOn(engine, args) {
  const server = await serve(args);
  try {
    const small = await gameWith(server.endpoint, SMALL);
    const large = await gameWith(server.endpoint, LARGE);
    let ok = true;
    for (const measure of MEASURES) {
      const runs = { small: [], large: [] };
      let failures = 0;
      await load(server.endpoint, measure.request(small), 1);
      for (let i = 0; i < PAIRS; i++) {
        // Each pair in the other order from the last, so neither side always runs warmer.
        const order = i % 2 === 0 ? ['small', 'large'] : ['large', 'small'];
        for (const side of order) {
          const r = await load(server.endpoint, measure.request(side === 'small' ? small : large), DURATION_S);
          runs[side].push(r.requests.average);
          failures += r.non2xx + r.errors + r.timeouts;
        }
      }
      const ratio = median(runs.small) / median(runs.large);
      const within = ratio <= BUDGET_RATIO && failures === 0;
      ok &&= within;
      const fmt = (xs) => xs.map((x) => x.toFixed(0)).join(', ');
      console.log(`  ${engine}, ${measure.name}: ${SMALL} lobbies ${fmt(runs.small)} req/s (median ${median(runs.small).toFixed(0)}); ${LARGE} lobbies ${fmt(runs.large)} req/s (median ${median(runs.large).toFixed(0)})`);
      console.log(`    cost ratio ${ratio.toFixed(2)}x, ${failures} failed requests` + (within ? `  ok (budget ${BUDGET_RATIO}x)` : `  OVER BUDGET (${BUDGET_RATIO}x, 0 failures)`));
    }
    return ok;
  } finally {
    await server.stop();
  }
}

export async function runLobbyReadsBench() {
  console.log(`emulator reads at ${LARGE} running lobbies against ${SMALL} (${CONNECTIONS} connections, ${PAIRS} pairs of ${DURATION_S} s, load ${os.loadavg()[0].toFixed(1)}):`);
  const sqlite = await measureOn('SQLite', []);
  const pg = process.env.GAMEHOST_BENCH_DATABASE_URL ? { url: process.env.GAMEHOST_BENCH_DATABASE_URL, stop: async () => {} } : await startEmbeddedPostgres();
  try {
    return (await measureOn('PostgreSQL', ['--database', pg.url])) && sqlite;
  } finally {
    await pg.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = (await runLobbyReadsBench()) ? 0 : 1;
