// A pushed image tar on its way to the daemon (runtime/images.ts): every name it carries is gone (manifest.json's
// RepoTags, the legacy repositories file, index.json's name annotations), what it holds is passed on as read, and
// what cannot be passed on safely (a link where a name file goes, an entry under a link, a device, a sparse file, more
// than one image, more than the bound once unpacked, in the tar or in a gzip layer) is refused in one line. No daemon:
// the tar that would reach it is read back here.
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { Header, Parser } from 'tar';
import { describe, expect, it } from 'vitest';
import { imageTar } from '../../src/emulator/runtime/images.js';

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
