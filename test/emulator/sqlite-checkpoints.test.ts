// A serve's SQLite store checkpoints its WAL on a thread of its own (SqliteStore.open's 'thread'): the pages reach
// the database file while the serve's connection, whose own bound is WAL_FALLBACK_PAGES, never checkpoints.
import { randomUUID } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it, vi } from 'vitest';
import { prepareDataDir } from '../../src/emulator/datadir.js';
import { SqliteStore } from '../../src/emulator/stores/sqlite.js';
import { WAL_FALLBACK_PAGES } from '../../src/emulator/stores/sqlite-driver.js';
import { tempDir } from '../helpers/cli.js';
import { lobbyRow } from '../helpers/lobby-row.js';

it('with checkpoints on a thread, the pages of 40 lobbies reach the database file before it closes; the WAL goes with it', async () => {
  const file = join(prepareDataDir(tempDir()).root, 'emulator.db');
  const store = SqliteStore.open(file, 5_000, 'thread');
  const before = statSync(file).size;
  for (let i = 0; i < 40; i++)
    await store.insertLobby(lobbyRow({ namespace_id: 'ns-checkpoints' }), { player_id: randomUUID(), source_ip: '127.0.0.1', registration_ms: 60_000, connected: true });
  // Under any connection's own bound (1,000 pages by default, WAL_FALLBACK_PAGES here): a page in the file came
  // through the thread.
  expect(statSync(`${file}-wal`).size).toBeLessThan(Math.min(1000, WAL_FALLBACK_PAGES) * 4096);
  await vi.waitFor(() => expect(statSync(file).size).toBeGreaterThan(before), { timeout: 10_000 });
  await store.close();
  expect(existsSync(`${file}-wal`)).toBe(false);
});
