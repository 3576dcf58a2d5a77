// The images of pushed builds, by content: a pushed `docker save` (or OCI layout) tar is rewritten on its way to
// the daemon so that it names nothing (manifest.json's RepoTags emptied, the legacy `repositories` dropped, index.json's
// name annotations removed), every entry is re-encoded (what the daemon reads is what was checked here), and its
// unpacked size is counted as it is read (the LZ4 frame, the tar, each gzip layer) against a bound: a game never
// names an image on the host, and a bomb is refused while the daemon has only a load in progress, which it drops.
// Each build's image is then known by its ID ("Loaded image ID: sha256:…"), loaded once per build (concurrent
// first lobbies share the load), and recorded in the data directory's images.json: images loaded by ID carry no
// label, so the record is how a later serve (after a kill too) knows which images are the emulator's to remove.
import { once } from 'node:events';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { Readable } from 'node:stream';
import { createGunzip, type Gunzip } from 'node:zlib';
import { Header, Pax } from 'tar';
import { ByteReader, decompressLz4, Lz4FormatError } from '../../shared/lz4.js';
import { EngineError, type DockerEngine } from './engine-api.js';
import { RunnerError } from './runtime.js';

/** The largest unpacked image a build may load unless serve is told otherwise (--max-image-size). */
export const DEFAULT_MAX_IMAGE_BYTES = 4 * 1024 ** 3;
/** A loaded image no lobby started from for this long is removed (loaded again by the next lobby that needs it). */
export const UNUSED_IMAGE_MS = 24 * 60 * 60 * 1000;
/** The record of the images this emulator loaded, in its data directory. */
export const IMAGES_FILE = 'images.json';

// The files of an image tar that carry names, at its root.
const MANIFEST = 'manifest.json';
const INDEX = 'index.json';
const REPOSITORIES = 'repositories';
// The annotations that name an image in an OCI index (containerd's and the OCI spec's).
const NAME_ANNOTATIONS = ['org.opencontainers.image.ref.name', 'io.containerd.image.name'];
// manifest.json and index.json are read whole to be rewritten: this much at most; pax headers likewise.
const MAX_METADATA_BYTES = 16 * 1024 * 1024;
const MAX_PAX_BYTES = 1024 * 1024;
const BLOCK = 512;

/** A build as the emulator keeps it: its kind and compression (as pushed), and a way to read its bytes. */
export interface BuildSource {
  id: string;
  /** Its game: where a sweep looks for it in the store. */
  gameId: string;
  kind: string;
  compression: string;
  open(): Readable | Promise<Readable>;
}

/** A build's image refused before the daemon kept anything of it (too large, not an image tar, a name it cannot lose). */
export class ImageRefused extends RunnerError {}

function formatBytes(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${n} bytes` : `${v.toFixed(v < 10 ? 1 : 0).replace(/\.0$/, '')} ${units[i]}`;
}

/** Counts what an image unpacks to, refusing the build as soon as it passes the bound. */
class Budget {
  used = 0;
  constructor(private readonly max: number) {}
  add(n: number): void {
    this.used += n;
    if (this.used > this.max)
      throw new ImageRefused(`the build's image unpacks to more than ${formatBytes(this.max)} (the bound of this emulator; serve --max-image-size raises it): refused before Docker kept it`);
  }
}

/** Whether a tar header block's checksum holds, as Go's archive/tar (the daemon's reader) accepts it: unsigned or signed. */
function checksumValid(block: Buffer): boolean {
  const stored = parseInt(block.subarray(148, 156).toString('latin1').replace(/[\0 ]+$/, '').trim(), 8);
  if (Number.isNaN(stored)) return false;
  let unsigned = 8 * 0x20;
  let signed = 8 * 0x20;
  for (let i = 0; i < BLOCK; i++) {
    if (i >= 148 && i < 156) continue;
    unsigned += block[i]!;
    signed += block[i]! > 127 ? block[i]! - 256 : block[i]!;
  }
  return stored === unsigned || stored === signed;
}

/** The records of a pax extended header (`<length> <key>=<value>\n`, lengths in bytes), as Go reads them. */
function paxRecords(data: Buffer): Map<string, string> {
  const records = new Map<string, string>();
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    const length = space === -1 ? NaN : Number(data.subarray(at, space).toString('latin1'));
    if (!Number.isSafeInteger(length) || length <= space - at || at + length > data.length || data[at + length - 1] !== 0x0a)
      throw new ImageRefused('the build is not a tar Docker can load: a damaged pax header');
    const record = data.subarray(space + 1, at + length - 1).toString('utf8');
    const eq = record.indexOf('=');
    if (eq <= 0) throw new ImageRefused('the build is not a tar Docker can load: a damaged pax header');
    records.set(record.slice(0, eq), record.slice(eq + 1));
    at += length;
  }
  return records;
}

const isZero = (block: Buffer) => block.every((b) => b === 0);
const padding = (size: number) => (BLOCK - (size % BLOCK)) % BLOCK;

/**
 * Looks at the headers of a tar as it streams by (a layer, as the daemon will unpack it) for what would unpack to
 * more than its bytes: sparse files (GNU 'S', pax GNU.sparse.*) are refused. Anything that is not a tar stops the
 * scan: the daemon cannot unpack it either.
 */
class LayerScanner {
  private header = Buffer.alloc(BLOCK);
  private headerBytes = 0;
  private skip = 0;
  private pax: Buffer[] | undefined;
  private paxLeft = 0;
  private done = false;

  push(chunk: Buffer): void {
    let at = 0;
    while (!this.done && at < chunk.length) {
      if (this.skip > 0 || this.paxLeft > 0) {
        const take = Math.min(this.skip + this.paxLeft, chunk.length - at);
        if (this.paxLeft > 0) {
          const data = Math.min(this.paxLeft, take);
          this.pax!.push(chunk.subarray(at, at + data));
          this.paxLeft -= data;
          this.skip -= take - data;
          if (this.paxLeft === 0) this.checkPax(Buffer.concat(this.pax!));
        } else this.skip -= take;
        at += take;
        continue;
      }
      const take = Math.min(BLOCK - this.headerBytes, chunk.length - at);
      chunk.copy(this.header, this.headerBytes, at, at + take);
      this.headerBytes += take;
      at += take;
      if (this.headerBytes < BLOCK) return;
      this.headerBytes = 0;
      this.onHeader(this.header);
    }
  }

  private onHeader(block: Buffer): void {
    if (isZero(block) || !checksumValid(block)) {
      this.done = true;
      return;
    }
    const h = new Header(block);
    const size = h.size ?? 0;
    const type = String.fromCharCode(block[156]!);
    if (type === 'S') throw new ImageRefused('a layer of the build holds a sparse file, which would unpack to more than it holds: not loaded');
    if ((type === 'x' || type === 'g') && size <= MAX_PAX_BYTES) {
      this.pax = [];
      this.paxLeft = size;
      this.skip = padding(size);
      if (size === 0) this.checkPax(Buffer.alloc(0));
    } else this.skip = size + padding(size);
  }

  private checkPax(data: Buffer): void {
    this.pax = undefined;
    let records: Map<string, string>;
    try {
      records = paxRecords(data);
    } catch {
      this.done = true;
      return;
    }
    for (const key of records.keys())
      if (key.startsWith('GNU.sparse.')) throw new ImageRefused('a layer of the build holds a sparse file, which would unpack to more than it holds: not loaded');
  }
}

/** A tar entry's path as the daemon unpacks it (relative, cleaned); undefined for the root itself. */
function cleanPath(raw: string): string | undefined {
  const p = posix.normalize(raw.replace(/^\/+/, '')).replace(/\/+$/, '');
  if (p === '.' || p === '') return undefined;
  if (p === '..' || p.startsWith('../')) throw new ImageRefused(`the build is not an image tar Docker can load: an entry outside it (${JSON.stringify(raw.slice(0, 100))})`);
  return p;
}

/** A 512-byte header (and its pax header first, for what ustar cannot hold) for an entry as it is passed on. */
function encodeHeader(data: { path: string; type: 'File' | 'Directory' | 'SymbolicLink' | 'Link'; size: number; mode?: number; mtime?: Date; linkpath?: string; uid?: number; gid?: number }): Buffer {
  const fields = { path: data.path, type: data.type, size: data.size, mode: data.mode ?? (data.type === 'Directory' ? 0o755 : 0o644), mtime: data.mtime ?? new Date(0), linkpath: data.linkpath, uid: data.uid ?? 0, gid: data.gid ?? 0 };
  const header = new Header(fields);
  const block = Buffer.alloc(BLOCK);
  header.encode(block, 0);
  if (!header.needPax) return block;
  return Buffer.concat([new Pax({ path: data.path, linkpath: data.linkpath, size: data.size, mtime: fields.mtime }).encode(), block]);
}

/** manifest.json without what names or links: each image's Config and Layers, RepoTags empty. One image per build. */
function rewriteManifest(text: string): Buffer {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ImageRefused("the build is not an image tar Docker can load: its manifest.json is not JSON");
  }
  if (!Array.isArray(parsed) || parsed.length === 0) throw new ImageRefused('the build is not an image tar Docker can load: its manifest.json lists no image');
  if (parsed.length > 1) throw new ImageRefused(`the build holds ${parsed.length} images: push one image per build (docker save <image>)`);
  const entry = parsed[0] as { Config?: unknown; Layers?: unknown };
  if (typeof entry?.Config !== 'string' || !Array.isArray(entry.Layers) || !entry.Layers.every((l) => typeof l === 'string'))
    throw new ImageRefused("the build is not an image tar Docker can load: its manifest.json's image has no Config or Layers");
  // Parent (a link to an image of the host's) and LayerSources (layers fetched from URLs) go too.
  return Buffer.from(JSON.stringify([{ Config: entry.Config, RepoTags: [], Layers: entry.Layers }]));
}

/** index.json (OCI layout) without the annotations that name images. One image per build. */
function rewriteIndex(text: string): Buffer {
  let parsed: { manifests?: unknown; annotations?: unknown } | null;
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch {
    throw new ImageRefused("the build is not an image tar Docker can load: its index.json is not JSON");
  }
  if (parsed === null || typeof parsed !== 'object' || !Array.isArray(parsed.manifests)) throw new ImageRefused('the build is not an image tar Docker can load: its index.json lists no manifests');
  if (parsed.manifests.length > 1) throw new ImageRefused(`the build holds ${parsed.manifests.length} images: push one image per build (docker save <image>)`);
  const unname = (holder: unknown) => {
    const annotations = (holder as { annotations?: unknown } | null)?.annotations;
    if (annotations !== null && typeof annotations === 'object') for (const key of NAME_ANNOTATIONS) delete (annotations as Record<string, unknown>)[key];
  };
  unname(parsed);
  for (const m of parsed.manifests) unname(m);
  return Buffer.from(JSON.stringify(parsed));
}

/** The compressions Docker would undo that cannot be counted here, by their first bytes. */
function uncountable(head: Buffer): string | undefined {
  if (head.subarray(0, 3).equals(Buffer.from('BZh'))) return 'bzip2';
  if (head.subarray(0, 6).equals(Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]))) return 'xz';
  if (head.subarray(0, 4).equals(Buffer.from([0x28, 0xb5, 0x2f, 0xfd]))) return 'zstd';
  return undefined;
}
const isGzip = (head: Buffer) => head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;

/** Counts a gzip-compressed file's content as it unpacks (and scans it as a layer), discarding it. */
class GzipCounter {
  private readonly gunzip: Gunzip = createGunzip();
  private failure: Error | undefined;
  private readonly ended: Promise<void>;

  constructor(budget: Budget, scanner: LayerScanner) {
    this.gunzip.on('data', (chunk: Buffer) => {
      if (this.failure) return;
      try {
        budget.add(chunk.length);
        scanner.push(chunk);
      } catch (err) {
        this.failure = err as Error;
        this.gunzip.destroy();
      }
    });
    this.ended = new Promise((resolve) => {
      this.gunzip.once('end', resolve);
      this.gunzip.once('close', resolve);
      this.gunzip.once('error', (err) => {
        this.failure ??= new ImageRefused(`a gzip-compressed layer of the build is damaged (${err.message})`);
        resolve();
      });
    });
  }

  async write(chunk: Buffer): Promise<void> {
    if (this.failure) throw this.failure;
    if (!this.gunzip.write(chunk)) await Promise.race([once(this.gunzip, 'drain'), this.ended]);
    if (this.failure) throw this.failure;
  }

  async end(): Promise<void> {
    if (!this.failure) this.gunzip.end();
    await this.ended;
    if (this.failure) throw this.failure;
  }
}

/**
 * A pushed image tar (already out of its LZ4 frame), rewritten for the daemon: every entry re-encoded as read here,
 * the names gone, its size counted against `maxBytes`. Throws ImageRefused (which the caller turns into an aborted
 * load) on anything it does not pass on whole.
 */
export async function* imageTar(source: AsyncIterable<Buffer>, maxBytes: number): AsyncGenerator<Buffer> {
  const budget = new Budget(maxBytes);
  const input = new ByteReader(source, (got, n) => new ImageRefused(`the build is not an image tar Docker can load: it ends in the middle of an entry (${got} of ${n} bytes)`));
  const need = async (n: number) => {
    const bytes = await input.read(n);
    if (bytes === null) throw new ImageRefused('the build is not an image tar Docker can load: it ends in the middle of an entry');
    budget.add(bytes.length);
    return bytes;
  };
  // Entries under a link would be written where the link points (a link to "." makes x/manifest.json the root's).
  const links = new Set<string>();
  let named = false;
  let pending: { path?: string; linkpath?: string; size?: number } = {};
  for (let first = true; ; first = false) {
    // A first block cut short is no tar at all; what failed to be read (the file, its LZ4) says so itself.
    const block = first ? await input.read(BLOCK).catch((err: unknown) => (err instanceof ImageRefused ? notATar() : Promise.reject(err))) : await input.read(BLOCK);
    if (block === null) {
      if (first) throw new ImageRefused('the build is empty');
      break;
    }
    budget.add(BLOCK);
    if (isZero(block)) break;
    if (!checksumValid(block)) {
      const kind = first ? uncountable(block) ?? (isGzip(block) ? 'gzip' : undefined) : undefined;
      if (kind) throw new ImageRefused(`the build is a ${kind}-compressed tar: push the tar itself (LZ4 on the way up is undone here)`);
      notATar();
    }
    const h = new Header(block);
    const type = String.fromCharCode(block[156]!);
    const size = pending.size ?? h.size ?? 0;
    if (!Number.isSafeInteger(size) || size < 0) throw new ImageRefused('the build is not an image tar Docker can load: an entry of no size');
    if (type === 'x' || type === 'g' || type === 'L' || type === 'K') {
      if (size > MAX_PAX_BYTES) throw new ImageRefused('the build is not an image tar Docker can load: an extended header over 1 MiB');
      const data = size === 0 ? Buffer.alloc(0) : await need(size);
      if (padding(size)) await need(padding(size));
      // Global headers: ignored by the daemon's unpacking, and not passed on.
      if (type === 'g') continue;
      if (type === 'L' || type === 'K') {
        const name = data.toString('utf8').replace(/\0.*$/s, '');
        pending = type === 'L' ? { ...pending, path: name } : { ...pending, linkpath: name };
        continue;
      }
      const records = paxRecords(data);
      for (const key of records.keys()) if (key.startsWith('GNU.sparse.')) throw new ImageRefused('the build holds a sparse file, which would unpack to more than it holds: not loaded');
      const paxSize = records.get('size');
      pending = {
        ...pending,
        ...(records.has('path') ? { path: records.get('path') } : {}),
        ...(records.has('linkpath') ? { linkpath: records.get('linkpath') } : {}),
        ...(paxSize !== undefined ? { size: /^\d+$/.test(paxSize) ? Number(paxSize) : -1 } : {}),
      };
      continue;
    }
    const rawPath = pending.path ?? h.path ?? '';
    const rawLink = pending.linkpath ?? h.linkpath ?? '';
    pending = {};
    const path = cleanPath(rawPath);
    type Kind = 'File' | 'Directory' | 'SymbolicLink' | 'Link';
    const kind: Kind | undefined = type === '0' || type === '\0' || type === '7' ? (rawPath.endsWith('/') ? 'Directory' : 'File') : type === '5' ? 'Directory' : type === '2' ? 'SymbolicLink' : type === '1' ? 'Link' : undefined;
    if (kind === undefined) {
      if (type === 'S') throw new ImageRefused('the build holds a sparse file, which would unpack to more than it holds: not loaded');
      throw new ImageRefused(`the build is not an image tar Docker can load: an entry of type ${JSON.stringify(type)} (devices, FIFOs and the like have no place in one)`);
    }
    if (path !== undefined) {
      for (let at = path.indexOf('/'); at !== -1; at = path.indexOf('/', at + 1))
        if (links.has(path.slice(0, at))) throw new ImageRefused(`the build is not an image tar Docker can load: ${JSON.stringify(path.slice(0, 100))} lies under a link`);
    }
    const root = path !== undefined && !path.includes('/') ? path : undefined;
    if (kind === 'SymbolicLink' || kind === 'Link') {
      if (path === undefined || root === MANIFEST || root === INDEX || root === REPOSITORIES)
        throw new ImageRefused(`the build is not an image tar Docker can load: ${path ?? '.'} is a link`);
      links.add(path);
    }
    const dataSize = kind === 'File' ? size : 0;
    // Data of entries that have none to unpack (a directory's, a link's) is read and not passed on.
    if (kind !== 'File' && size > 0) {
      await skip(input, budget, size + padding(size));
    }
    if (path === undefined) {
      if (kind === 'File') await skip(input, budget, size + padding(size));
      continue;
    }
    const meta = { path: kind === 'Directory' ? `${path}/` : path, type: kind, mode: h.mode, mtime: h.mtime, uid: h.uid, gid: h.gid };
    if (kind === 'File' && (root === MANIFEST || root === INDEX || root === REPOSITORIES)) {
      if (root === REPOSITORIES) {
        // The legacy names file: dropped.
        await skip(input, budget, size + padding(size));
        continue;
      }
      if (size > MAX_METADATA_BYTES) throw new ImageRefused(`the build is not an image tar Docker can load: its ${root} is over 16 MiB`);
      const text = (size === 0 ? Buffer.alloc(0) : await need(size)).toString('utf8');
      if (padding(size)) await need(padding(size));
      const body = root === MANIFEST ? rewriteManifest(text) : rewriteIndex(text);
      named = true;
      yield Buffer.concat([encodeHeader({ ...meta, size: body.length }), body, Buffer.alloc(padding(body.length))]);
      continue;
    }
    if (kind !== 'File') {
      yield encodeHeader({ ...meta, size: 0, linkpath: kind === 'SymbolicLink' ? rawLink : kind === 'Link' ? (cleanPath(rawLink) ?? '.') : undefined });
      continue;
    }
    yield encodeHeader({ ...meta, size: dataSize });
    // The file's bytes as they come; one that is a layer is scanned, and counted as it unpacks when gzip-compressed.
    let left = size;
    let gzip: GzipCounter | undefined;
    const scanner = new LayerScanner();
    for (let head = true; left > 0; head = false) {
      const chunk = await input.upTo(left);
      if (chunk === null) throw new ImageRefused('the build is not an image tar Docker can load: it ends in the middle of an entry');
      budget.add(chunk.length);
      left -= chunk.length;
      if (head) {
        const compressed = uncountable(chunk);
        if (compressed) throw new ImageRefused(`a layer of the build is ${compressed}-compressed, which this emulator cannot bound: save it uncompressed (docker save) or with gzip`);
        if (isGzip(chunk)) gzip = new GzipCounter(budget, scanner);
      }
      if (gzip) await gzip.write(chunk);
      else scanner.push(chunk);
      yield chunk;
    }
    await gzip?.end();
    if (padding(size)) yield Buffer.from(await need(padding(size)));
  }
  if (!named) throw new ImageRefused('the build is not an image tar Docker can load: it has no manifest.json (docker save writes one)');
  yield Buffer.alloc(2 * BLOCK);
}

function notATar(): never {
  throw new ImageRefused('the build is not an image tar Docker can load (docker save writes one)');
}

async function skip(input: ByteReader, budget: Budget, n: number): Promise<void> {
  for (let left = n; left > 0; ) {
    const chunk = await input.upTo(left);
    if (chunk === null) throw new ImageRefused('the build is not an image tar Docker can load: it ends in the middle of an entry');
    budget.add(chunk.length);
    left -= chunk.length;
  }
}

/** The build's bytes as a tar: LZ4 undone where it was pushed so. */
function tarOf(raw: Readable, compression: string): AsyncIterable<Buffer> {
  return compression === 'lz4' ? decompressLz4(raw) : raw;
}

/**
 * Loads a build into the daemon by content (imageTar: no name of its own reaches the daemon) and answers its image
 * ID. Refused in one line (a RunnerError) for an oci_bundle, a tar that is not an image, one too large.
 */
export async function loadBuild(daemon: DockerEngine, build: Pick<BuildSource, 'kind' | 'compression' | 'open'>, maxBytes = DEFAULT_MAX_IMAGE_BYTES): Promise<string> {
  if (build.kind === 'oci_bundle') throw new RunnerError('oci_bundle builds are not run yet: push a docker_image build (docker save) to run it');
  if (build.kind !== 'docker_image') throw new RunnerError(`builds of kind ${build.kind} cannot be run`);
  let raw: Readable;
  try {
    raw = await build.open();
  } catch (err) {
    throw new RunnerError(`the build's bytes cannot be read: ${(err as Error).message}`);
  }
  // What the rewriting refused: the load is aborted (its body fails), and this says why rather than the daemon.
  let refused: Error | undefined;
  const body = Readable.from(
    (async function* () {
      try {
        yield* imageTar(tarOf(raw, build.compression), maxBytes);
      } catch (err) {
        refused = err instanceof Lz4FormatError ? new ImageRefused(`the build's LZ4 compression: ${err.message}`) : (err as Error);
        throw refused;
      }
    })(),
  );
  let messages: string[];
  try {
    messages = await daemon.loadImage(body);
  } catch (err) {
    if (refused) throw refused instanceof RunnerError ? refused : new RunnerError(`the build's bytes cannot be read: ${refused.message}`);
    throw new RunnerError(`Docker could not load the build: ${(err as Error).message}`);
  } finally {
    raw.destroy();
    body.destroy();
  }
  for (const m of messages) {
    const match = /^Loaded image ID: (sha256:[0-9a-f]{64})\s*$/m.exec(m);
    if (match) return match[1]!;
  }
  throw new RunnerError('Docker loaded the build but answered no image ID: is it a docker save tar?');
}

interface ImageRecord {
  /** The build's game, where a sweep looks for the build. */
  game: string;
  /** Its image ID (sha256:…). */
  image: string;
  /** When a lobby last started from it (ms since the epoch). */
  used: number;
}

/** images.json: per daemon (as reached: DOCKER_HOST, a context, the socket), the builds whose images it loaded. */
interface ImagesFile {
  daemons: Record<string, Record<string, ImageRecord>>;
}

export interface BuildImagesOptions {
  dataDir: string;
  maxBytes?: number;
  unusedMs?: number;
  now?(): number;
  warn?(message: string): void;
}

/**
 * The images of the builds this emulator runs, on one daemon: loaded once per build (concurrent first lobbies
 * share one load), started by ID, recorded in the data directory, and removed when their build is gone or no
 * lobby used them for UNUSED_IMAGE_MS (never an image someone named since, nor one a container still uses).
 */
export class BuildImages {
  private readonly loads = new Map<string, Promise<string>>();
  /** This daemon's records; undefined until read from the file. */
  private records: Record<string, ImageRecord> | undefined;
  private reading: Promise<Record<string, ImageRecord>> | undefined;
  private writing: Promise<void> = Promise.resolve();
  private readonly file: string;
  readonly maxBytes: number;

  constructor(
    private readonly daemon: DockerEngine,
    private readonly opts: BuildImagesOptions,
  ) {
    this.file = join(opts.dataDir, IMAGES_FILE);
    this.maxBytes = opts.maxBytes ?? DEFAULT_MAX_IMAGE_BYTES;
  }

  private now(): number {
    return this.opts.now?.() ?? Date.now();
  }

  private async read(): Promise<ImagesFile> {
    try {
      const parsed = JSON.parse(await readFile(this.file, 'utf8')) as Partial<ImagesFile> | null;
      return { daemons: parsed?.daemons && typeof parsed.daemons === 'object' ? parsed.daemons : {} };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.opts.warn?.(`${this.file} cannot be read (${(err as Error).message}): images it recorded are not removed by this serve`);
      return { daemons: {} };
    }
  }

  /** This daemon's records, read once (every caller gets the one object). */
  private mine(): Promise<Record<string, ImageRecord>> {
    this.reading ??= this.read().then((all) => (this.records = all.daemons[this.daemon.where] ?? {}));
    return this.reading;
  }

  /** Writes the records (whole, through a rename: a crash leaves the old file or the new one), one write at a time. */
  private save(): Promise<void> {
    this.writing = this.writing.then(async () => {
      const all = await this.read();
      all.daemons[this.daemon.where] = this.records ?? {};
      if (Object.keys(all.daemons[this.daemon.where]!).length === 0) delete all.daemons[this.daemon.where];
      await mkdir(dirname(this.file), { recursive: true });
      const temp = `${this.file}.${process.pid}.tmp`;
      await writeFile(temp, JSON.stringify(all, null, 1) + '\n', { mode: 0o600 });
      await rename(temp, this.file);
    }).catch((err: unknown) => this.opts.warn?.(`${this.file} was not written: ${(err as Error).message}`));
    return this.writing;
  }

  /**
   * The image ID a lobby of `build` starts from: the recorded one while the daemon has it, else loaded now, once for
   * every lobby that asks meanwhile. `beforeLoad` is called (once per caller) when the caller is to wait for a load.
   */
  async imageFor(build: BuildSource, beforeLoad?: () => Promise<void>): Promise<string> {
    const records = await this.mine();
    const known = records[build.id];
    if (known !== undefined && !this.loads.has(build.id) && (await this.daemon.hasImage(known.image).catch(() => false))) {
      known.used = this.now();
      return known.image;
    }
    await beforeLoad?.();
    let load = this.loads.get(build.id);
    if (load === undefined) {
      load = (async () => {
        const image = await loadBuild(this.daemon, build, this.maxBytes);
        records[build.id] = { game: build.gameId, image, used: this.now() };
        await this.save();
        return image;
      })().finally(() => this.loads.delete(build.id));
      this.loads.set(build.id, load);
    }
    return load;
  }

  /**
   * Removes the images of builds the store no longer has (`exists` answers which of a game's builds it has) and of
   * builds no lobby started from for unusedMs; answers how many images went.
   */
  async sweep(exists: (gameId: string, buildIds: string[]) => Promise<Set<string>>): Promise<number> {
    const records = await this.mine();
    const byGame = new Map<string, string[]>();
    for (const [buildId, r] of Object.entries(records)) if (!this.loads.has(buildId)) byGame.set(r.game, [...(byGame.get(r.game) ?? []), buildId]);
    const drop: string[] = [];
    const cutoff = this.now() - (this.opts.unusedMs ?? UNUSED_IMAGE_MS);
    for (const [game, ids] of byGame) {
      const present = await exists(game, ids);
      for (const id of ids) if (!present.has(id) || records[id]!.used < cutoff) drop.push(id);
    }
    return this.remove(drop);
  }

  /** Removes the images of these builds (a build deleted); answers how many images went. */
  async remove(buildIds: string[]): Promise<number> {
    const records = await this.mine();
    let removed = 0;
    let changed = false;
    for (const id of buildIds) {
      const record = records[id];
      if (record === undefined) continue;
      // Another build of the same content keeps the image.
      const shared = Object.entries(records).some(([other, r]) => other !== id && r.image === record.image && !buildIds.includes(other));
      const outcome = shared ? 'gone' : await this.removeImage(record.image);
      if (outcome === 'in use') continue;
      delete records[id];
      changed = true;
      if (outcome === 'removed') removed++;
    }
    if (changed) await this.save();
    return removed;
  }

  /** Removes the images of every build recorded for this daemon (`emulator reset`); answers how many images went. */
  async removeAll(): Promise<number> {
    return this.remove(Object.keys(await this.mine()));
  }

  /** Removes an image the emulator loaded: never one named since (someone's now), nor one a container uses (kept for later). */
  private async removeImage(image: string): Promise<'removed' | 'gone' | 'in use'> {
    try {
      const tags = await this.daemon.imageTags(image);
      if (tags === undefined) return 'gone';
      if (tags.length > 0) return 'gone';
      await this.daemon.removeImage(image, { force: false });
      return 'removed';
    } catch (err) {
      if (err instanceof EngineError && err.status === 404) return 'gone';
      if (err instanceof EngineError && err.status === 409) return 'in use';
      this.opts.warn?.(`the image ${image.slice(0, 19)} of a build was not removed: ${(err as Error).message}`);
      return 'in use';
    }
  }

  /** Keeps the records' last-use times (a lobby started): written with the sweeps, not at every lobby. */
  flush(): Promise<void> {
    return this.records === undefined ? Promise.resolve() : this.save();
  }
}

