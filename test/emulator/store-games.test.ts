// The Store's game methods, as a contract: what every implementation must answer (the list of stores is a
// parameter; SQLite here, a networked store joins it with its own opener).
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/emulator/stores/postgres.js';
import { SqliteStore } from '../../src/emulator/stores/sqlite.js';
import type { GameRow, LocalObjectIndex, Store } from '../../src/emulator/stores/store.js';
import { createTestDatabase, PG_PRESENT } from '../helpers/postgres.js';
import { tempDir } from '../helpers/cli.js';
import { lobbyRow } from '../helpers/lobby-row.js';

/** Two connections to one store, as two replicas (or processes) hold; whether the store can be had here. */
const STORES: [name: string, present: boolean, open: () => Promise<[Store, Store]>][] = [
  [
    'SqliteStore',
    true,
    async () => {
      const file = join(tempDir(), 'emulator.db');
      return [SqliteStore.open(file), SqliteStore.open(file)];
    },
  ],
  [
    'PostgresStore',
    PG_PRESENT,
    async () => {
      // Two pools on one database: two replicas.
      const url = await createTestDatabase();
      const one = await PostgresStore.open({ connectionString: url });
      return [one, await PostgresStore.open({ connectionString: url })];
    },
  ],
];

function game(over: Partial<GameRow> = {}): GameRow {
  return {
    game_id: randomUUID(),
    namespace_id: randomUUID(),
    name: 'job',
    game_modes: '["default"]',
    regions: '[{"id":"lnd-atl","name":"Atlanta"}]',
    create_ts: 1_000,
    expire_ts: 10_000,
    delete_ts: null,
    ...over,
  };
}

async function fill(store: Store, g: GameRow, tag: string): Promise<void> {
  const lobbyId = randomUUID();
  await store.insertLobby(
    lobbyRow({ lobby_id: lobbyId, namespace_id: g.namespace_id }, 1_000),
    { player_id: randomUUID(), source_ip: '', registration_ms: 120_000, connected: true },
  );
  await store.joinLobby(lobbyId, { player_id: randomUUID(), source_ip: '', registration_ms: 120_000, connected: true }, 1_001, null);
  const buildId = randomUUID();
  const uploadId = randomUUID();
  const inserted = await store.insertBuild(
    {
      build_id: buildId,
      game_id: g.game_id,
      upload_id: uploadId,
      display_name: 'b',
      image_tag: tag,
      kind: 'docker_image',
      compression: 'none',
      path: 'x',
      content_type: null,
      content_length: 1,
      sha256: null,
      complete: 0,
      create_ts: 1_000,
      complete_ts: null,
    },
    { upload_id: uploadId, build_id: buildId, content_length: 1, part_size: 1, part_count: 1 },
  );
  expect(inserted).toBe(true);
}

describe.each(STORES)('%s: games', (_name, present, open) => {
  let opened: Store[] = [];
  afterEach(async () => {
    for (const s of opened) await s.close();
    opened = [];
  });
  const it_ = it.skipIf(!present);
  const both = async () => (opened = await open()) as [Store, Store];

  it_('a game inserted through one connection is read, listed and claimed for deletion once through either', async () => {
    const [one, two] = await both();
    const g = game();
    await one.insertGame(g);
    expect(await two.getGame(g.game_id)).toEqual(g);
    expect((await two.listGames()).map((r) => r.game_id)).toEqual([g.game_id]);
    // Read (and maybe cached) through two; a deletion begun through one shows there at once.
    expect((await two.getGame(g.game_id))?.delete_ts).toBeNull();
    expect(await one.claimGameDeletion(g.game_id, 2_000)).toBe(true);
    expect((await two.getGame(g.game_id))?.delete_ts).toBe(2_000);
    await one.purgeGame(g.game_id, [g.namespace_id]);
    expect(await two.getGame(g.game_id)).toBeUndefined();
    await one.insertGame(g);
    // A game two once found missing is there as soon as one inserts it.
    expect(await two.getGame(g.game_id)).toEqual(g);
    const claims = await Promise.all([one.claimGameDeletion(g.game_id, 2_000), two.claimGameDeletion(g.game_id, 2_000)]);
    expect(claims.filter(Boolean)).toHaveLength(1);
    // Being deleted: still readable (its tokens are refused by its delete_ts), no longer listed.
    expect((await one.getGame(g.game_id))?.delete_ts).toBe(2_000);
    expect(await two.listGames()).toEqual([]);
    expect(await one.claimGameDeletion(randomUUID(), 2_000)).toBe(false);
  });

  it_('claimExpiredGames hands each expired game to one caller, and a stale claim over once more', async () => {
    const [one, two] = await both();
    const expired = [game({ expire_ts: 5_000 }), game({ expire_ts: 6_000 })];
    const live = game({ expire_ts: 60_000 });
    for (const g of [...expired, live]) await one.insertGame(g);
    const [a, b] = await Promise.all([one.claimExpiredGames(6_000, 1_000), two.claimExpiredGames(6_000, 1_000)]);
    expect([...a.expired, ...b.expired].sort()).toEqual(expired.map((g) => g.game_id).sort());
    expect([...a.stale, ...b.stale]).toEqual([]);
    expect(await one.claimExpiredGames(6_500, 1_000)).toEqual({ expired: [], stale: [] });
    // Deletions begun longer ago than the stale limit: taken up again (to purge once more), by one caller.
    const [c, d] = await Promise.all([one.claimExpiredGames(7_001, 1_000), two.claimExpiredGames(7_001, 1_000)]);
    expect([...c.stale, ...d.stale].sort()).toEqual(expired.map((g) => g.game_id).sort());
    expect([...c.expired, ...d.expired]).toEqual([]);
    expect((await one.getGame(live.game_id))?.delete_ts).toBeNull();
  });

  it_("gameObjects and purgeGame reach one game's records only; the same tag lives in two games", async () => {
    const [store] = await both();
    const a = game();
    const b = game();
    await store.insertGame(a);
    await store.insertGame(b);
    await fill(store, a, 'game-server:ci');
    await fill(store, b, 'game-server:ci');
    // Exports are records where the store also indexes the local blobs (SQLite); a bucket keeps them as objects.
    const index = store as Partial<LocalObjectIndex>;
    await index.insertExport?.(randomUUID(), a.game_id, 'csv', 1_000, 99_000);
    const exports = index.insertExport ? 1 : 0;
    const objects = await store.gameObjects(a.game_id);
    expect(objects.builds).toHaveLength(1);
    expect(objects.export_ids).toHaveLength(exports);
    // The first purge keeps the game's row; the second removes it.
    expect(await store.purgeGame(a.game_id, [a.namespace_id], true)).toEqual({ lobbies: 1, players: 2, builds: 1, exports });
    expect(await store.getGame(a.game_id)).toEqual(a);
    expect(await store.listBuilds(a.game_id)).toEqual([]);
    expect(await store.playerCounts(a.namespace_id)).toEqual([]);
    // The other game keeps everything; a purge run again (taken over) finds nothing left.
    expect(await store.listBuilds(b.game_id)).toHaveLength(1);
    expect(await store.playerCounts(b.namespace_id)).toEqual([{ game_mode: 'default', region_id: 'lnd-atl', player_count: 2 }]);
    expect(await store.purgeGame(a.game_id, [a.namespace_id])).toEqual({ lobbies: 0, players: 0, builds: 0, exports: 0 });
    expect(await store.getGame(a.game_id)).toBeUndefined();
  });
});
