// A pushed image tar on its way to the daemon (runtime/images.ts): every name it carries is gone (manifest.json's
// RepoTags, the legacy repositories file, index.json's name annotations), what it holds is passed on as read, and
// what cannot be passed on safely (a link where a name file goes, an entry under a link, a device, a sparse file, more
// than one image, more than the bound once unpacked, in the tar or in a gzip layer) is refused in one line; first with
// no daemon (the tar that would reach it read back here), then on the real one: a tar naming a local image leaves it
// as it was, each build runs its own image by ID, concurrent first lobbies share one load, an LZ4 bomb leaves nothing.
import { createHash, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { Header, Parser } from 'tar';
import { afterAll, describe, expect, it } from 'vitest';
import { BuildImages, imageTar, type BuildSource } from '../../src/emulator/runtime/images.js';
import { tempDir } from '../helpers/cli.js';
import { DOCKER, DOCKER_PRESENT, engineJson, tagImage } from '../helpers/docker.js';
import { runBin } from '../helpers/bin.js';
import { lobbyJson, logLines, until } from '../helpers/lobby-server.js';
import { replicaEnv, serve, stopReplica } from '../helpers/replica.js';

interface Entry {
  path: string;
  type?: 'File' | 'Directory' | 'SymbolicLink' | 'Link' | 'CharacterDevice' | 'SparseFile';
  data?: Buffer | string;
  linkpath?: string;
  /** Pax records written before the entry (their own header). */
  pax?: Record<string, string>;
}

const pad = (n: number) => Buffer.alloc((512 - (n % 512)) % 512);

function header(fields: ConstructorParameters<typeof Header>[0] & object): Buffer {
  const block = Buffer.alloc(512);
  new Header({ mode: 0o644, mtime: new Date(0), uid: 0, gid: 0, ...fields }).encode(block, 0);
  return block;
}

function paxBlock(records: Record<string, string>): Buffer {
  const body = Buffer.from(
    Object.entries(records)
      .map(([k, v]) => {
        const rest = ` ${k}=${v}\n`;
        let n = Buffer.byteLength(rest) + 1;
        while (String(n).length + Buffer.byteLength(rest) !== n) n = String(n).length + Buffer.byteLength(rest);
        return `${n}${rest}`;
      })
      .join(''),
  );
  return Buffer.concat([header({ path: 'PaxHeader', type: 'ExtendedHeader', size: body.length }), body, pad(body.length)]);
}

/** A tar of these entries, written block by block (so hostile ones can be written too). */
function tarOf(entries: Entry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    if (e.pax) parts.push(paxBlock(e.pax));
    const data = Buffer.from(e.data ?? '');
    parts.push(header({ path: e.path, type: e.type ?? 'File', size: data.length, linkpath: e.linkpath }), data, pad(data.length));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

const MANIFEST = JSON.stringify([{ Config: 'abc.json', RepoTags: ['node:24-slim', 'gamehost-test-victim:1'], Layers: ['l1/layer.tar'], Parent: 'sha256:' + 'f'.repeat(64) }]);

/** What imageTar passes on, read back: each entry's path, type and content. */
async function rewritten(input: Buffer | AsyncIterable<Buffer>, max = 1024 ** 3): Promise<Map<string, { type: string; data: Buffer; linkpath?: string }>> {
  const source = Buffer.isBuffer(input) ? Readable.from([input]) : input;
  const out: Buffer[] = [];
  for await (const chunk of imageTar(source, max)) out.push(chunk);
  const entries = new Map<string, { type: string; data: Buffer; linkpath?: string }>();
  const parser = new Parser({
    onReadEntry: (entry) => {
      const chunks: Buffer[] = [];
      entry.on('data', (c: Buffer) => chunks.push(c));
      entry.on('end', () => entries.set(entry.path, { type: entry.type, data: Buffer.concat(chunks), linkpath: entry.linkpath }));
    },
  });
  const ended = once(parser, 'end');
  parser.end(Buffer.concat(out));
  await ended;
  return entries;
}

const refusal = (input: Buffer | AsyncIterable<Buffer>, max?: number) => rewritten(input, max).then(() => 'passed', (err: Error) => `${err.constructor.name}: ${err.message}`);

describe('a pushed image tar on its way to the daemon', () => {
  it('names nothing: RepoTags emptied (Parent gone), repositories dropped, index.json without name annotations; the rest as it was', async () => {
    const layer = tarOf([{ path: 'app/server.js', data: 'console.log(1)' }]);
    const index = {
      schemaVersion: 2,
      manifests: [{ mediaType: 'application/vnd.oci.image.manifest.v1+json', digest: 'sha256:' + 'a'.repeat(64), size: 10, annotations: { 'org.opencontainers.image.ref.name': 'node:24-slim', 'io.containerd.image.name': 'docker.io/library/node:24-slim', keep: 'me' } }],
    };
    const out = await rewritten(
      tarOf([
        { path: 'l1/', type: 'Directory' },
        { path: 'l1/layer.tar', data: layer },
        { path: 'abc.json', data: '{"config":{}}' },
        { path: './manifest.json', data: MANIFEST },
        { path: 'repositories', data: '{"node":{"24-slim":"abc"}}' },
        { path: 'index.json', data: JSON.stringify(index) },
        { path: 'blobs/sha256/' + 'b'.repeat(64), type: 'SymbolicLink', linkpath: '../../l1/layer.tar' },
      ]),
    );
    expect([...out.keys()].sort()).toEqual(['abc.json', 'blobs/sha256/' + 'b'.repeat(64), 'index.json', 'l1/', 'l1/layer.tar', 'manifest.json']);
    expect(JSON.parse(out.get('manifest.json')!.data.toString())).toEqual([{ Config: 'abc.json', RepoTags: [], Layers: ['l1/layer.tar'] }]);
    expect(JSON.parse(out.get('index.json')!.data.toString()).manifests[0].annotations).toEqual({ keep: 'me' });
    expect(out.get('l1/layer.tar')!.data.equals(layer)).toBe(true);
    expect(out.get('blobs/sha256/' + 'b'.repeat(64))).toMatchObject({ type: 'SymbolicLink', linkpath: '../../l1/layer.tar' });
  });

  it('a name file named through pax or a GNU long name is still found and rewritten; names over 100 bytes pass whole', async () => {
    const long = 'd'.repeat(120) + '/layer.tar';
    const gnuLong = Buffer.concat([header({ path: '././@LongLink', type: 'NextFileHasLongPath', size: 14 }), Buffer.from('manifest.json\0'), pad(14)]);
    const input = Buffer.concat([
      gnuLong,
      header({ path: 'innocent', type: 'File', size: MANIFEST.length }),
      Buffer.from(MANIFEST),
      pad(MANIFEST.length),
      tarOf([{ path: 'x', pax: { path: long }, data: 'layer' }]),
    ]);
    const out = await rewritten(input);
    expect(JSON.parse(out.get('manifest.json')!.data.toString())[0].RepoTags).toEqual([]);
    expect(out.get(long)!.data.toString()).toBe('layer');
    expect(out.has('innocent')).toBe(false);
  });

  it('refuses, in one line, what could name an image or unpack past what it holds', async () => {
    const manifest = { path: 'manifest.json', data: MANIFEST };
    expect(await refusal(tarOf([{ path: 'manifest.json', type: 'SymbolicLink', linkpath: 'evil.json' }]))).toBe(
      'ImageRefused: the build is not an image tar Docker can load: manifest.json is a link',
    );
    expect(await refusal(tarOf([{ path: 'x', type: 'SymbolicLink', linkpath: '.' }, { path: 'x/manifest.json', data: MANIFEST }]))).toBe(
      'ImageRefused: the build is not an image tar Docker can load: "x/manifest.json" lies under a link',
    );
    expect(await refusal(tarOf([{ path: '../manifest.json', data: MANIFEST }]))).toMatch(/an entry outside it/);
    expect(await refusal(tarOf([{ path: 'dev', type: 'CharacterDevice' }, manifest]))).toMatch(/an entry of type "3"/);
    expect(await refusal(tarOf([{ path: 'big', pax: { 'GNU.sparse.realsize': String(2 ** 40) }, data: 'x' }, manifest]))).toMatch(/sparse file/);
    expect(await refusal(tarOf([{ path: 'l/layer.tar', data: tarOf([{ path: 'hole', pax: { 'GNU.sparse.major': '1', 'GNU.sparse.minor': '0' }, data: 'x' }]) }, manifest]))).toMatch(
      /^ImageRefused: a layer of the build holds a sparse file/,
    );
    const two = JSON.stringify([JSON.parse(MANIFEST)[0], JSON.parse(MANIFEST)[0]]);
    expect(await refusal(tarOf([{ path: 'manifest.json', data: two }]))).toBe('ImageRefused: the build holds 2 images: push one image per build (docker save <image>)');
    expect(await refusal(tarOf([{ path: 'abc.json', data: '{}' }]))).toBe('ImageRefused: the build is not an image tar Docker can load: it has no manifest.json (docker save writes one)');
    expect(await refusal(Buffer.from('not a tar at all'))).toBe('ImageRefused: the build is not an image tar Docker can load (docker save writes one)');
    expect(await refusal(tarOf([{ path: 'l/layer.tar', data: Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), Buffer.alloc(100)]) }, manifest]))).toMatch(/zstd-compressed/);
    // Cut short: refused, not passed on as a tar that ends early.
    const whole = tarOf([{ path: 'l/layer.tar', data: Buffer.alloc(4096, 1) }, manifest]);
    expect(await refusal(whole.subarray(0, 3000))).toMatch(/ends in the middle of an entry/);
  });

  it('counts what it unpacks to: the tar as read, and a gzip layer as it unpacks (a bomb is refused early)', async () => {
    const max = 1024 * 1024;
    const plain = tarOf([{ path: 'l/layer.tar', data: Buffer.alloc(2 * max) }, { path: 'manifest.json', data: MANIFEST }]);
    expect(await refusal(plain, max)).toBe(
      "ImageRefused: the build's image unpacks to more than 1 MiB (the bound of this emulator; serve --max-image-size raises it): refused before Docker kept it",
    );
    // 64 MiB of zeros in a gzip layer of about 64 KiB: far under the bound as pushed, far over it unpacked.
    const gzip = createGzip();
    const packed: Buffer[] = [];
    gzip.on('data', (c: Buffer) => packed.push(c));
    for (let i = 0; i < 64; i++) if (!gzip.write(Buffer.alloc(1024 * 1024))) await once(gzip, 'drain');
    gzip.end();
    await once(gzip, 'end');
    const bomb = Buffer.concat(packed);
    expect(bomb.length).toBeLessThan(max);
    const input = tarOf([{ path: 'l/layer.tar', data: bomb }, { path: 'manifest.json', data: MANIFEST }]);
    expect(await refusal(input, 16 * max)).toMatch(/unpacks to more than 16 MiB/);
    // Under a bound that holds it, the same layer passes as it was pushed (compressed).
    const out = await rewritten(input, 128 * max);
    expect(out.get('l/layer.tar')!.data.equals(bomb)).toBe(true);
  });
});

/** A tiny image from nothing (one file in one layer, never run): its tar naming `tags`, and its ID (the config's digest). */
function tinyImage(content: string, tags: string[]): { tar: Buffer; id: string } {
  const layer = tarOf([{ path: 'hello', data: content }]);
  const config = JSON.stringify({ architecture: 'amd64', os: 'linux', config: { Cmd: ['/hello'] }, rootfs: { type: 'layers', diff_ids: [`sha256:${createHash('sha256').update(layer).digest('hex')}`] } });
  const digest = createHash('sha256').update(config).digest('hex');
  const manifest = JSON.stringify([{ Config: `${digest}.json`, RepoTags: tags, Layers: ['l/layer.tar'] }]);
  const repositories = JSON.stringify(Object.fromEntries(tags.map((t) => [t.split(':')[0], { [t.split(':')[1]!]: digest }])));
  return {
    tar: tarOf([{ path: 'l/layer.tar', data: layer }, { path: `${digest}.json`, data: config }, { path: 'manifest.json', data: manifest }, { path: 'repositories', data: repositories }]),
    id: `sha256:${digest}`,
  };
}

/**
 * An LZ4 frame of an image tar whose one layer holds `zeros` bytes of zeros, a few MB as pushed: 64 KiB blocks of
 * zeros, each compressed once; its config's digest (the ID the daemon would give it) and the layer's diff ID.
 */
function lz4Bomb(dir: string, blocks: number): { file: string; id: string; diffId: string } {
  const lz4 = createRequire(import.meta.url)('lz4-napi') as { compressSync(b: Buffer): Buffer; compressFrameSync(b: Buffer): Buffer };
  const BLOCK = 64 * 1024;
  const fileSize = blocks * BLOCK - 1024;
  const inner = header({ path: 'zeros', type: 'File', size: fileSize });
  const layerSize = 512 + fileSize + 1024;
  const hash = createHash('sha256').update(inner);
  const zero = Buffer.alloc(BLOCK);
  for (let i = 0; i < blocks; i++) hash.update(zero);
  const diffId = `sha256:${hash.digest('hex')}`;
  const config = JSON.stringify({ architecture: 'amd64', os: 'linux', rootfs: { type: 'layers', diff_ids: [diffId] } });
  const digest = createHash('sha256').update(config).digest('hex');
  const manifest = JSON.stringify([{ Config: `${digest}.json`, RepoTags: ['bomb:1'], Layers: ['l/layer.tar'] }]);
  const tail = tarOf([{ path: `${digest}.json`, data: config }, { path: 'manifest.json', data: manifest }]);
  const raw = (data: Buffer) => {
    const size = Buffer.alloc(4);
    size.writeUInt32LE((data.length | 0x8000_0000) >>> 0);
    return Buffer.concat([size, data]);
  };
  const packedZero = lz4.compressSync(zero).subarray(4);
  const zeroBlock = Buffer.concat([Buffer.alloc(4), packedZero]);
  zeroBlock.writeUInt32LE(packedZero.length, 0);
  const file = path.join(dir, 'bomb.tar.lz4');
  const out = fs.openSync(file, 'w');
  fs.writeSync(out, lz4.compressFrameSync(Buffer.alloc(0)).subarray(0, 7));
  fs.writeSync(out, raw(Buffer.concat([header({ path: 'l/layer.tar', type: 'File', size: layerSize }), inner])));
  const many = Buffer.concat(Array.from({ length: 256 }, () => zeroBlock));
  for (let i = 0; i < blocks; i += 256) fs.writeSync(out, i + 256 <= blocks ? many : Buffer.concat(Array.from({ length: blocks - i }, () => zeroBlock)));
  for (let at = 0; at < tail.length; at += BLOCK) fs.writeSync(out, raw(tail.subarray(at, at + BLOCK)));
  fs.writeSync(out, Buffer.alloc(4));
  fs.closeSync(out);
  return { file, id: `sha256:${digest}`, diffId };
}

describe.skipIf(!DOCKER_PRESENT)('pushed images on the real daemon', { timeout: 120_000 }, () => {
  const docker = DOCKER!;
  const victim = `gamehost-test-victim:${process.pid}`;
  const made: string[] = [];
  afterAll(async () => {
    for (const image of made) await docker.removeImage(image).catch(() => {});
  });
  const source = (tar: Buffer | string, opens?: { n: number }): BuildSource => ({
    id: randomUUID(),
    gameId: randomUUID(),
    kind: 'docker_image',
    compression: typeof tar === 'string' ? 'lz4' : 'none',
    open: () => {
      if (opens) opens.n++;
      return typeof tar === 'string' ? fs.createReadStream(tar) : Readable.from([tar]);
    },
  });

  it("a tar naming a local image and another build's image leaves both as they were; each build runs its own, by ID", async () => {
    // The host's own image, named as a person named it (loaded as docker load does, names and all).
    const local = tinyImage('the host', [victim]);
    made.push(victim, local.id);
    await docker.loadImage(Readable.from([local.tar]));
    expect(await docker.imageTags(local.id)).toEqual([victim]);

    const images = new BuildImages(docker, { dataDir: tempDir() });
    const game = tinyImage('game A', ['game-a:1']);
    const a = source(game.tar);
    made.push(game.id);
    expect(await images.imageFor(a)).toBe(game.id);
    // The attacker names the host's image and build A's, in RepoTags and in the legacy repositories file.
    const attack = tinyImage('attacker', [victim, 'game-a:1', 'node:24-slim']);
    made.push(attack.id);
    const b = source(attack.tar);
    expect(await images.imageFor(b)).toBe(attack.id);

    expect(await docker.imageTags(local.id)).toEqual([victim]);
    expect(await docker.imageTags(attack.id)).toEqual([]);
    expect(await docker.imageTags(game.id)).toEqual([]);
    expect(await images.imageFor(a)).toBe(game.id);
    expect(await docker.hasImage('game-a:1')).toBe(false);
  });

  it('concurrent first lobbies of a build share one load; a build deleted takes its image, never one named since', async () => {
    const dataDir = tempDir();
    const images = new BuildImages(docker, { dataDir });
    const image = tinyImage(`shared ${randomUUID()}`, ['x:1']);
    made.push(image.id);
    const opens = { n: 0 };
    const build = source(image.tar, opens);
    let waited = 0;
    const ids = await Promise.all(Array.from({ length: 4 }, () => images.imageFor(build, async () => void waited++)));
    expect(ids).toEqual(Array(4).fill(image.id));
    expect(opens.n).toBe(1);
    expect(waited).toBe(4);
    // Recorded in the data directory: a later serve knows the image is the emulator's.
    const record = JSON.parse(fs.readFileSync(path.join(dataDir, 'images.json'), 'utf8'));
    expect(record.daemons[docker.where]?.[build.id], JSON.stringify(record)).toMatchObject({ game: build.gameId, image: image.id });

    // The store no longer has the build: its image goes.
    expect(await images.sweep(async () => new Set())).toBe(1);
    expect(await docker.hasImage(image.id)).toBe(false);
    // Loaded again, then named by someone: the emulator forgets it and leaves it be.
    await images.imageFor(build);
    await tagImage(image.id, 'gamehost-test-kept', String(process.pid));
    made.push(`gamehost-test-kept:${process.pid}`);
    expect(await images.remove([build.id])).toBe(0);
    expect(await docker.imageTags(image.id)).toEqual([`gamehost-test-kept:${process.pid}`]);
  });

  it("through serve: a bomb build's lobby stops failed, the refusal its std_err line and one line on serve's stderr; Docker keeps nothing", async () => {
    const dataDir = tempDir();
    const r = await serve(['--run-build', '--max-image-size', '64MiB', '--data-dir', dataDir], { DOCKER_HOST: process.env.DOCKER_HOST });
    try {
      const bomb = lz4Bomb(tempDir(), 16 * 1024);
      const env = replicaEnv(tempDir(), r);
      // Already LZ4: pushed as it is, a few MB for 1 GiB unpacked.
      const pushed = await runBin(['build', 'push', bomb.file, '--tag', 'bomb:1'], env);
      expect(pushed.code, pushed.stderr).toBe(0);
      const made = await runBin(['lobby', 'create', '--game-mode', 'default', '--json'], env);
      expect(made.code, made.stderr).toBe(0);
      const lobbyId = JSON.parse(made.stdout).lobby.lobby_id as string;
      const stopped = await until('the lobby stopped', async () => (await lobbyJson(r, lobbyId)).lobby.status.stopped ?? undefined);
      expect(stopped).toMatchObject({ exit_code: 1, failed: true });
      const refusal = "its server did not start: the build's image unpacks to more than 64 MiB (the bound of this emulator; serve --max-image-size raises it): refused before Docker kept it";
      expect(await logLines(r, lobbyId, 'std_err')).toEqual([`[emulator] ${refusal}`]);
      expect(r.stderr().split('\n').filter((l) => l.includes('unpacks to more than'))).toEqual([`[emulator] lobby ${lobbyId}: ${refusal}`]);
      expect(await docker.hasImage(bomb.id)).toBe(false);
    } finally {
      await stopReplica(r);
    }
  });

  it('a build no lobby started from for the unused time loses its image at the sweep; one started from since keeps it', async () => {
    let now = 0;
    const images = new BuildImages(docker, { dataDir: tempDir(), now: () => now, unusedMs: 1000 });
    const idle = tinyImage(`idle ${randomUUID()}`, []);
    const busy = tinyImage(`busy ${randomUUID()}`, []);
    made.push(idle.id, busy.id);
    const [a, b] = [source(idle.tar), source(busy.tar)];
    expect(await images.imageFor(a)).toBe(idle.id);
    expect(await images.imageFor(b)).toBe(busy.id);
    // Both builds still in the store; only the time since a lobby last started from each tells them apart.
    now = 1500;
    expect(await images.imageFor(b)).toBe(busy.id);
    const present = async (_game: string, ids: string[]) => new Set(ids);
    expect(await images.sweep(present)).toBe(1);
    expect(await docker.hasImage(idle.id)).toBe(false);
    expect(await docker.hasImage(busy.id)).toBe(true);
    // And loaded again when a lobby of it comes.
    expect(await images.imageFor(a)).toBe(idle.id);
    expect(await docker.hasImage(idle.id)).toBe(true);
  });

  it('an LZ4 bomb (1 GiB of zeros in a layer, a few MB pushed) is refused at the bound, and the daemon keeps nothing of it', async () => {
    const bomb = lz4Bomb(tempDir(), 16 * 1024);
    expect(fs.statSync(bomb.file).size).toBeLessThan(8 * 1024 * 1024);
    const before = new Set((await engineJson<{ Id: string }[]>('/images/json?all=1')).map((i) => i.Id));
    const images = new BuildImages(docker, { dataDir: tempDir(), maxBytes: 64 * 1024 * 1024 });
    const began = Date.now();
    await expect(images.imageFor(source(bomb.file))).rejects.toThrow(
      "the build's image unpacks to more than 64 MiB (the bound of this emulator; serve --max-image-size raises it): refused before Docker kept it",
    );
    console.log(`runtime-images: LZ4 bomb refused in ${Date.now() - began} ms`);
    expect(await docker.hasImage(bomb.id)).toBe(false);
    // docker images -a: nothing new holds its layer (other tests may load images meanwhile: theirs are not it).
    for (const image of await engineJson<{ Id: string }[]>('/images/json?all=1')) {
      if (before.has(image.Id)) continue;
      const inspected = await engineJson<{ RootFS?: { Layers?: string[] } }>(`/images/${image.Id}/json`);
      expect(inspected.RootFS?.Layers ?? []).not.toContain(bomb.diffId);
    }
    // docker system df: no image of its ID, none of its layer.
    const df = await engineJson<{ Images: { Id: string }[] }>('/system/df');
    expect(df.Images.map((i) => i.Id)).not.toContain(bomb.id);
  });
});
