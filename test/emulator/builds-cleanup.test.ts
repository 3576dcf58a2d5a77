// Builds go away: an upload whose part URLs have expired (6 h) is swept with its bytes, and the admin route
// deletes a build (records and bytes) on demand. On SQLite and, when a server is at hand, PostgreSQL.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/emulator/index.js';
import { createTestDatabase, PG_PRESENT } from '../helpers/postgres.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';

const PART = 64 * 1024;
const HOUR = 3_600_000;

for (const kind of ['sqlite', 'postgres'] as const) {
  describe.skipIf(kind === 'postgres' && !PG_PRESENT)(`builds are cleaned up (${kind})`, () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    let t: TestEmulator;
    beforeAll(async () => {
      t = await startTestEmulator({ partSize: PART, singlePartMax: 20 }, { clock, database: kind === 'postgres' ? await createTestDatabase() : undefined });
    });
    afterAll(() => t.stop());

    const create = async (tag: string) => {
      const res = await t.call('POST', `/cloud/games/${t.gameId}/builds`, {
        token: t.tokens.cloud,
        body: { display_name: tag, image_tag: tag, image_file: { path: 'x.tar', content_length: 3 * PART } },
      });
      expect(res.status).toBe(200);
      return res.json as { build_id: string; upload_id: string; image_presigned_requests: { url: string }[] };
    };
    const put = (url: string) => fetch(url, { method: 'PUT', body: Buffer.alloc(PART, 1) });
    const builds = async () => ((await t.call('GET', '/_emulator/builds')).json.builds as { build_id: string }[]).map((b) => b.build_id);
    const uploadDir = (uploadId: string) => path.join(t.dataDir, 'uploads', uploadId);

    it('an unfinished upload is kept while its part URLs live, and swept with its bytes once they expired', async () => {
      const b = await create('game:stale');
      expect((await put(b.image_presigned_requests[0]!.url)).status).toBe(200);
      if (kind === 'sqlite') expect(fs.existsSync(uploadDir(b.upload_id))).toBe(true);
      clock.advance(5 * HOUR);
      expect(await builds()).toContain(b.build_id);
      clock.advance(HOUR + 1);
      expect(await builds()).not.toContain(b.build_id);
      if (kind === 'sqlite') expect(fs.existsSync(uploadDir(b.upload_id))).toBe(false);
      // Its tag is free again: the unfinished build no longer holds it.
      await create('game:stale');
    });

    it('DELETE /_emulator/builds/{id} removes a complete build, records and bytes; twice is 404', async () => {
      const b = await create('game:done');
      for (const r of b.image_presigned_requests) expect((await put(r.url)).status).toBe(200);
      const done = await t.call('POST', `/cloud/uploads/${b.upload_id}/complete`, { token: t.tokens.cloud });
      expect(done.status).toBe(200);
      if (kind === 'sqlite') expect(fs.existsSync(path.join(t.dataDir, 'builds', b.build_id))).toBe(true);
      const del = await t.call('DELETE', `/_emulator/builds/${b.build_id}`);
      expect([del.status, del.json]).toEqual([200, { build_id: b.build_id, game_id: t.gameId }]);
      expect(await builds()).not.toContain(b.build_id);
      if (kind === 'sqlite') expect(fs.existsSync(path.join(t.dataDir, 'builds', b.build_id))).toBe(false);
      expect((await t.call('DELETE', `/_emulator/builds/${b.build_id}`)).status).toBe(404);
    });
  });
}
