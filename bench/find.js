// Find budget: lobbies.find with 10,000 running lobbies in the namespace costs at most 2x what it costs with 10.
// Two emulators in this process, each on its own data directory, seeded through the store (10 and 10,000 running
// lobbies of the game mode and region asked for, one player each); then the same finds on both, in alternating
// batches, and the ratio of their total wall times. Find reads the lobbies_find index, fullest first, so the
// number of running lobbies should not show.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { startEmulator } from '../dist/emulator/index.js';
import { prepareDataDir } from '../dist/emulator/datadir.js';
import { VERSION_ID } from '../dist/emulator/services/ids.js';
import { SqliteStore } from '../dist/emulator/stores/sqlite.js';

const BUDGET = 2;
// 10 lobbies of 256 hold 2,550 more players: the warm-up and the batches stay below, so neither side creates.
const BATCHES = Number(process.env.BENCH_FIND_BATCHES ?? 5);
const PER_BATCH = Number(process.env.BENCH_FIND_REQUESTS ?? 400);
const NAMESPACE_ID = '9d2c7e41-5b6a-4f3e-9c8d-7a6b5c4d3e2f';

async function seeded(lobbies) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gamehost-bench-find-'));
  const store = SqliteStore.open(path.join(prepareDataDir(dir).root, 'emulator.db'));
  const now = Date.now();
  for (let i = 0; i < lobbies; i++) {
    await store.insertLobby(
      {
        lobby_id: randomUUID(), namespace_id: NAMESPACE_ID, game_mode: 'default', region_id: 'lnd-atl', region_name: 'Atlanta',
        max_players: 256, max_players_direct: 256, max_players_party: 256, publicity: 'public', tags: '{}', lobby_config: null, create_ts: now, start_ts: now, ready_ts: now,
        stop_ts: null, exit_code: null, failed: null, idle_lifetime_ms: null, idle_stop_ts: null, ports: '{"default":{"port":20000}}',
        auto_created: 1, is_closed: 0, state: null, ready_deadline_ts: null, player_count: 1,
        owner: null, owner_pid: null, owner_start: null, server_pid: null, server_start: null,
        version_id: VERSION_ID, idle_max: 0, idle_ts: null,
      },
      { player_id: randomUUID(), source_ip: '127.0.0.1', registration_ms: 3_600_000, connected: true },
    );
  }
  await store.close();
  const emu = await startEmulator({ dataDir: dir, config: { startDelayMs: 0, readyDelayMs: 0 } });
  return { emu, dir };
}

function finds(emu) {
  return autocannon({
    url: `${emu.endpoint}/matchmaker/lobbies/find`,
    method: 'POST',
    headers: { authorization: `Bearer ${emu.tokens.public}`, 'content-type': 'application/json' },
    body: JSON.stringify({ game_modes: ['default'], regions: ['lnd-atl'] }),
    connections: 10,
    amount: PER_BATCH,
  });
}

export async function runFindBench() {
  const small = await seeded(10);
  const large = await seeded(10_000);
  try {
    // Warm-up on both (JIT, page caches), then alternating measured batches.
    await finds(small.emu);
    await finds(large.emu);
    let smallMs = 0;
    let largeMs = 0;
    let failed = 0;
    for (let b = 0; b < BATCHES; b++) {
      for (const [side, add] of [[small, (ms) => (smallMs += ms)], [large, (ms) => (largeMs += ms)]]) {
        const started = performance.now();
        const r = await finds(side.emu);
        add(performance.now() - started);
        failed += r.non2xx + r.errors + r.timeouts;
      }
    }
    const ratio = largeMs / smallMs;
    const ok = ratio <= BUDGET && failed === 0;
    console.log(`find at 10,000 running lobbies against 10 (${BATCHES} x ${PER_BATCH} finds each, 10 connections, in-process):`);
    console.log(
      `  ${(largeMs / (BATCHES * PER_BATCH)).toFixed(3)} against ${(smallMs / (BATCHES * PER_BATCH)).toFixed(3)} ms a find: ` +
        `${ratio.toFixed(2)}x, ${failed} failed` + (ok ? `  ok (budget ${BUDGET}x)` : `  OVER BUDGET (${BUDGET}x)`),
    );
    return ok;
  } finally {
    for (const side of [small, large]) {
      await side.emu.close();
      rmSync(side.dir, { recursive: true, force: true });
    }
  }
}

if (process.argv[1] === new URL(import.meta.url).pathname) process.exitCode = (await runFindBench()) ? 0 : 1;
