// What an assembly of a gamehost before schema version 22 left when killed mid-way (builds/<build_id>.tmp-<uuid>, as
// large as the build; this one writes nothing there, it moves the parts) does not stay: the next start removes it
// once it is no longer written to, the next assembly of its build at once, and so does the deletion of its game. A
// copy of parts across filesystems in progress (a temp directory, see local-blobs' move) is written to as a whole.
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startTestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/cli.js';

const PART = 1024;
const temps = (dataDir: string) => readdirSync(join(dataDir, 'builds')).filter((name) => name.includes('.tmp-'));

/** A temp file as a dead assembly of `buildId` leaves it, last written `ageMs` ago. */
function leftover(dataDir: string, buildId: string, ageMs: number): string {
  const name = `${buildId}.tmp-${randomUUID()}`;
  const file = join(dataDir, 'builds', name);
  writeFileSync(file, Buffer.alloc(PART));
  const when = (Date.now() - ageMs) / 1000;
  utimesSync(file, when, when);
  return name;
}

describe('files a dead assembly left', () => {
  it('the next start removes those no longer written to; one written a moment ago may be a live assembly and stays', async () => {
    const dataDir = tempDir();
    const first = await startTestEmulator({}, { dataDir });
    await first.close();
    const old = leftover(dataDir, randomUUID(), 60_000);
    const fresh = leftover(dataDir, randomUUID(), 0);
    expect(temps(dataDir).sort()).toEqual([old, fresh].sort());
    const second = await startTestEmulator({}, { dataDir });
    try {
      expect(temps(dataDir)).toEqual([fresh]);
    } finally {
      await second.stop();
    }
  });

  it("a directory being copied across filesystems stays while a file in it is written, however old the directory's own time", async () => {
    const dataDir = tempDir();
    const first = await startTestEmulator({}, { dataDir });
    await first.close();
    const past = (Date.now() - 60_000) / 1000;
    // A copy of its parts into builds/ (on another disk): part 1 copied a minute ago, part 2 being written now.
    const live = `${randomUUID()}.tmp-${randomUUID()}`;
    mkdirSync(join(dataDir, 'builds', live));
    writeFileSync(join(dataDir, 'builds', live, 'part-1'), Buffer.alloc(PART));
    utimesSync(join(dataDir, 'builds', live, 'part-1'), past, past);
    writeFileSync(join(dataDir, 'builds', live, 'part-2'), Buffer.alloc(PART));
    utimesSync(join(dataDir, 'builds', live), past, past);
    // The same, whose process died a minute ago.
    const dead = `${randomUUID()}.tmp-${randomUUID()}`;
    mkdirSync(join(dataDir, 'builds', dead));
    writeFileSync(join(dataDir, 'builds', dead, 'part-1'), Buffer.alloc(PART));
    utimesSync(join(dataDir, 'builds', dead, 'part-1'), past, past);
    utimesSync(join(dataDir, 'builds', dead), past, past);
    const second = await startTestEmulator({}, { dataDir });
    try {
      expect(temps(dataDir)).toEqual([live]);
    } finally {
      await second.stop();
    }
  });

  it("the next assembly removes its build's at once and the others no longer written to; a game's deletion, its own", async () => {
    const t = await startTestEmulator({ partSize: PART, singlePartMax: PART });
    try {
      const game = (await t.call('POST', '/_emulator/games', { body: {} })).json;
      const create = async (tag: string) => {
        const res = await t.call('POST', `/cloud/games/${game.game_id}/builds`, {
          token: game.tokens.cloud,
          body: { display_name: 'CI', image_tag: tag, image_file: { path: 'server.tar', content_length: 2 * PART } },
        });
        expect(res.status).toBe(200);
        for (const r of res.json.image_presigned_requests) expect((await fetch(r.url, { method: 'PUT', body: Buffer.alloc(PART, 1) })).status).toBe(200);
        return res.json as { build_id: string; upload_id: string };
      };
      const a = await create('game:a');
      const b = await create('game:b');
      const ownFresh = leftover(t.dataDir, a.build_id, 0);
      const otherOld = leftover(t.dataDir, randomUUID(), 60_000);
      const otherFresh = leftover(t.dataDir, randomUUID(), 0);
      const bFresh = leftover(t.dataDir, b.build_id, 0);
      expect(temps(t.dataDir)).toHaveLength(4);
      expect((await t.call('POST', `/cloud/uploads/${a.upload_id}/complete`, { token: game.tokens.cloud, body: {} })).status).toBe(200);
      expect(temps(t.dataDir).sort()).toEqual([otherFresh, bFresh].sort());
      expect([ownFresh, otherOld].some((name) => temps(t.dataDir).includes(name))).toBe(false);
      // b never completes; its game is deleted, and its temp file with it.
      expect((await t.call('DELETE', `/_emulator/games/${game.game_id}`)).status).toBe(200);
      expect(temps(t.dataDir)).toEqual([otherFresh]);
    } finally {
      await t.stop();
    }
  });
});
