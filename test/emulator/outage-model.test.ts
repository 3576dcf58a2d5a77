// A model of the store under a flapping connection: real servers (shell processes) whose lines and exits go to a
// real SQLite store through a connection that goes down and up again and again, in a seeded random order. Down, a
// call fails as a refused connection does (STORE_UNAVAILABLE, nothing written); lossy, the call is done and its
// answer lost (the connection broke after the commit), so it fails the same way though it was written. Whatever the
// order, once the store stays up every line is recorded once, in order, and every exit once, at the time the server
// ended.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { VERSION_ID } from '../../src/emulator/services/ids.js';
import { DEFAULT_CONFIG } from '../../src/emulator/config.js';
import { prepareDataDir } from '../../src/emulator/datadir.js';
import { mulberry32 } from '../../src/emulator/faults.js';
import { LobbyServers } from '../../src/emulator/runtime/servers.js';
import type { Game } from '../../src/emulator/services/games.js';
import { recordStop } from '../../src/emulator/services/lobbies.js';
import { lobbyToken } from '../../src/emulator/services/lobby-calls.js';
import { LobbyLogs } from '../../src/emulator/services/logs.js';
import { systemClock } from '../../src/emulator/services/clock.js';
import { SqliteStore } from '../../src/emulator/stores/sqlite.js';
import type { BlobStore, LobbyRow, Store } from '../../src/emulator/stores/store.js';
import { storeUnavailable } from '../../src/emulator/stores/unavailable.js';
import { tempDir } from '../helpers/cli.js';
import { lobbyRow as storedLobby } from '../helpers/lobby-row.js';

const POSIX = process.platform !== 'win32';

type Connection = 'up' | 'down' | 'lossy';

/**
 * `store` behind a connection that is up, down or lossy: down, every call fails before it reaches the store; lossy,
 * every call is done, then fails as if its answer was lost. The answers of the first LOSE_FIRST appends of lines are
 * lost whatever the state, so every run has some, however the flaps and the writes fall in time.
 */
const LOSE_FIRST = 6;
function flapping(store: Store): { store: Store; state: () => Connection; set: (state: Connection) => void; refused: () => number; lost: () => number } {
  let state: Connection = 'up';
  let refused = 0;
  let lost = 0;
  const proxy = new Proxy(store, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        if (state === 'down') {
          refused++;
          throw storeUnavailable('database', 'connect ECONNREFUSED 127.0.0.1:5432');
        }
        const lossy = state === 'lossy' || (prop === 'appendLobbyLogs' && lost < LOSE_FIRST);
        const result: unknown = await (value as (...a: unknown[]) => unknown).apply(target, args);
        if (lossy) {
          lost++;
          throw storeUnavailable('database', 'read ECONNRESET');
        }
        return result;
      };
    },
  });
  return { store: proxy, state: () => state, set: (s) => void (state = s), refused: () => refused, lost: () => lost };
}

const GAME: Game = {
  gameId: randomUUID(),
  namespaceId: randomUUID(),
  gameModes: ['default'],
  regions: [{ id: 'lnd-atl', name: 'Atlanta' }],
  name: '',
  createTs: 0,
  expireTs: null,
  seeded: false,
};

function lobbyRow(owner: { replica: string; pid: number; start: number }, now: number): LobbyRow {
  return storedLobby({ namespace_id: GAME.namespaceId, owner: owner.replica, owner_pid: owner.pid, owner_start: owner.start }, now);
}

describe.skipIf(!POSIX)('the records of running servers through a flapping store', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  for (const seed of [1, 2, 3]) {
    it(`seed ${seed}: every line once and in order, every exit once, whatever the order of ups and downs`, async () => {
      const random = mulberry32(seed);
      const dataDir = prepareDataDir(tempDir()).root;
      const real = SqliteStore.open(join(dataDir, 'emulator.db'));
      const conn = flapping(real);
      const config = { ...DEFAULT_CONFIG, readiness: 'run' as const, run: 'unused' };
      const secret = Buffer.alloc(32, 1);
      const logs = new LobbyLogs({ store: conn.store, blobs: {} as BlobStore, clock: systemClock, config });
      const owner = { replica: `r-${seed}`, pid: process.pid, start: 1 };
      const warnings: string[] = [];
      const servers = new LobbyServers({
        // Each server prints 300 numbered lines on stdout (some on stderr too), then exits with a code of its own.
        how: (_game, lobby) => ({ command: `i=0; while [ $i -lt 300 ]; do echo "$i"; [ $((i % 50)) -eq 0 ] && echo "e$i" >&2; i=$((i+1)); done; exit ${lobby.max_players}` }),
        workRoot: join(dataDir, 'lobbies'),
        store: conn.store,
        onExit: (lobbyId, stop) => recordStop(conn.store, systemClock.now(), lobbyId, stop),
        lobbyToken: (game, lobbyId) => lobbyToken(secret, game, lobbyId),
        logs,
        endpoint: () => 'http://127.0.0.1:9',
        warn: (m) => warnings.push(m),
        owner,
        maxRunning: 16,
        backoff: { baseMs: 2, capMs: 20 },
        sampleEveryMs: 60_000,
        readyWindowMs: 60_000,
        now: () => Date.now(),
      });
      close = async () => {
        conn.set('up');
        await servers.close();
        await real.close();
      };

      // The connection flaps while the servers run and end: up, down or lossy for 0 to 30 ms at a time, seeded.
      let flapping_ = true;
      const flaps = (async () => {
        let downs = 0;
        while (flapping_ || downs === 0) {
          const r = random();
          conn.set(r < 0.5 ? 'up' : r < 0.8 ? 'down' : 'lossy');
          if (conn.state() === 'down') downs++;
          await new Promise((r) => setTimeout(r, Math.floor(random() * 30)));
        }
        conn.set('up');
      })();

      const rows: LobbyRow[] = [];
      for (let i = 0; i < 6; i++) {
        const row = { ...lobbyRow(owner, Date.now()), max_players: 2 + i };
        await real.insertLobby(row, { player_id: randomUUID(), source_ip: '127.0.0.1', registration_ms: 60_000, connected: true });
        rows.push(row);
        expect(servers.reserve()).toBe(true);
        await servers.start(GAME, row, { versionId: VERSION_ID, versionName: '0.0.1', namespaceName: 'prod', env: {}, tier: 'basic-1d1', buildId: null });
      }
      // Every exit recorded (through the ups and downs): the lobbies all stopped in the store.
      const deadline = Date.now() + 30_000;
      for (;;) {
        const stopped = await Promise.all(rows.map((r) => real.getLobby(r.lobby_id)));
        if (stopped.every((l) => l?.stop_ts !== null)) break;
        if (Date.now() > deadline) throw new Error(`not all exits recorded; warnings: ${warnings.join(' | ')}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      flapping_ = false;
      await flaps;
      expect(conn.refused()).toBeGreaterThan(0);
      expect(conn.lost()).toBeGreaterThan(0);

      for (const row of rows) {
        const lobby = (await real.getLobby(row.lobby_id))!;
        expect(lobby).toMatchObject({ exit_code: row.max_players, failed: 1 });
        expect(lobby.stop_ts).toBeGreaterThanOrEqual(row.create_ts);
        const out = await real.lobbyLogs(row.lobby_id, 'std_out', 100_000, -1);
        expect(out.map((l) => l.line.toString())).toEqual(Array.from({ length: 300 }, (_, i) => String(i)));
        const err = await real.lobbyLogs(row.lobby_id, 'std_err', 100_000, -1);
        expect(err.map((l) => l.line.toString())).toEqual(['e0', 'e50', 'e100', 'e150', 'e200', 'e250']);
        // Stamped when they arrived, not when the store took them: none after the exit's recorded time.
        expect(Math.floor(out.at(-1)!.ts / 1000)).toBeLessThanOrEqual(lobby.stop_ts!);
      }
      // The store was said down, then up again, in one line each time (not one per write).
      expect(warnings.some((w) => w.startsWith('the store does not answer'))).toBe(true);
      expect(warnings.filter((w) => w.includes('was not recorded'))).toEqual([]);
    });
  }
});
