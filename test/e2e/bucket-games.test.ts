// A deleted game on the bucket store (moto_server): its open multipart uploads aborted, its builds' objects and
// its exports deleted, another game's left alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { tempDir } from '../helpers/cli.js';
import { MOTO_PRESENT, bucketAt, createBucket, s3, startMoto, type S3Server } from '../helpers/s3.js';

interface Created {
  game_id: string;
  tokens: { cloud: string };
}

describe.skipIf(!MOTO_PRESENT)('a deleted game on the bucket store', () => {
  let moto: S3Server;
  let emu: RunningEmulator;
  beforeAll(async () => {
    moto = await startMoto();
    await createBucket(moto.endpoint);
    emu = await startEmulator({ dataDir: tempDir(), bucket: bucketAt(moto.endpoint, 'emu/'), config: { startDelayMs: 0, readyDelayMs: 0 } });
  }, 60_000);
  afterAll(async () => {
    await emu?.close();
    await moto?.close();
  });

  const call = async (method: string, path: string, token: string | undefined, body?: unknown) => {
    const res = await fetch(emu.endpoint + path, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as any;
  };

  /** Every key in the bucket, and every open multipart upload's key. */
  async function bucketState(): Promise<{ keys: string[]; open: string[] }> {
    const list = await (await s3(moto.endpoint, 'GET', '?list-type=2')).text();
    const uploads = await (await s3(moto.endpoint, 'GET', '?uploads')).text();
    const keys = [...list.matchAll(/<Key>([^<]+)<\/Key>/g)].map((m) => m[1]!);
    const open = [...uploads.matchAll(/<Upload>[\s\S]*?<Key>([^<]+)<\/Key>/g)].map((m) => m[1]!);
    return { keys, open };
  }

  /** One complete build, one left open, one export; answers the keys they hold (the open one's is a marker). */
  async function fill(game: Created): Promise<string[]> {
    const build = (tag: string) =>
      call('POST', `/cloud/games/${game.game_id}/builds`, game.tokens.cloud, { display_name: 'b', image_tag: tag, image_file: { path: 'x', content_length: 1024 } });
    const done = await build('game-server:done');
    expect((await fetch(done.image_presigned_requests[0].url, { method: 'PUT', body: Buffer.alloc(1024, 1) })).status).toBe(200);
    await call('POST', `/cloud/uploads/${done.upload_id}/complete`, game.tokens.cloud, {});
    const open = await build('game-server:open');
    await call('POST', `/cloud/games/${game.game_id}/matchmaker/lobbies/export-history`, game.tokens.cloud, { query_start: 0, query_end: Date.now() });
    return [`emu/builds/${done.build_id}`, `emu/uploads/${open.upload_id}`];
  }

  it('leaves nothing of the deleted game in the bucket and everything of the other', async () => {
    const a: Created = await call('POST', '/_emulator/games', undefined, {});
    const b: Created = await call('POST', '/_emulator/games', undefined, {});
    const keysA = await fill(a);
    await fill(b);
    const before = await bucketState();
    expect(before.open).toHaveLength(2);
    expect(before.keys.filter((k) => k.startsWith(`emu/exports/${a.game_id}/`))).toHaveLength(1);

    const deleted = await call('DELETE', `/_emulator/games/${a.game_id}`, undefined);
    // The one export counted, though a bucket keeps it as an object rather than a record.
    expect(deleted.deleted).toMatchObject({ builds: 2, exports: 1 });
    const after = await bucketState();
    // b's complete build, its open upload's marker and its export stay; of a, nothing.
    expect(after.open).toHaveLength(1);
    const exportA = before.keys.filter((k) => k.startsWith(`emu/exports/${a.game_id}/`));
    expect(after.keys.sort()).toEqual(before.keys.filter((k) => !keysA.includes(k) && !exportA.includes(k)).sort());
    expect(after.keys.filter((k) => k.startsWith(`emu/exports/${b.game_id}/`))).toHaveLength(1);
  }, 60_000);
});
