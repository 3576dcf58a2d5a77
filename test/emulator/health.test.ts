// GET /_emulator/health: 200 only while the store and the bucket both answer; 503 naming the one that does not.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/index.js';
import { createTestDatabase, PG_PRESENT, queryDatabase } from '../helpers/postgres.js';
import { callAt, tempDir } from './helpers.js';

describe('the health check', () => {
  it('local files gone: 503 naming the bucket, the store still fine', async () => {
    const dir = tempDir();
    const emu = await startEmulator({ dataDir: dir });
    try {
      expect((await callAt(emu.endpoint, 'GET', '/_emulator/health')).status).toBe(200);
      rmSync(join(dir, 'builds'), { recursive: true });
      const sick = await callAt(emu.endpoint, 'GET', '/_emulator/health');
      expect(sick.status).toBe(503);
      expect(sick.json).toMatchObject({ ok: false, unavailable: 'bucket' });
      expect(sick.json.message).toMatch(/^the bucket does not answer: .*ENOENT/);
    } finally {
      await emu.close();
    }
  });

  it.skipIf(!PG_PRESENT)('its database dropped: 503 naming the store, and the replica goes on answering', async () => {
    const url = await createTestDatabase();
    const emu = await startEmulator({ dataDir: tempDir(), database: url });
    try {
      expect(emu.stores.records.kind).toBe('postgres');
      expect((await callAt(emu.endpoint, 'GET', '/_emulator/health')).status).toBe(200);
      const name = new URL(url).pathname.slice(1);
      const admin = new URL(url);
      admin.pathname = '/postgres';
      await queryDatabase(admin.toString(), `DROP DATABASE ${name} WITH (FORCE)`);
      const sick = await callAt(emu.endpoint, 'GET', '/_emulator/health');
      expect(sick.status).toBe(503);
      expect(sick.json).toMatchObject({ ok: false, unavailable: 'store' });
      expect(sick.json.message).toMatch(/^the store does not answer: /);
      // A request that needs the store fails as an internal error, and the replica keeps serving.
      const create = await callAt(emu.endpoint, 'POST', '/matchmaker/lobbies/create', { body: { game_mode: 'default' } });
      expect(create.status).toBe(500);
      expect((await callAt(emu.endpoint, 'GET', '/_emulator/health')).status).toBe(503);
    } finally {
      await emu.close();
    }
  });
});
