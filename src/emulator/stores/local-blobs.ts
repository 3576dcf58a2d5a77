// The BlobStore in the data directory: parts under uploads/<upload_id>/part-<n>, builds under builds/<build_id> (a
// build of one part is that part's file; one of several is kept as them, builds/<build_id>/part-<n>, the upload's
// directory moved into place once every part is checked, so each byte is written once), exports in the store's
// index; presigned URLs point at the emulator's own /_upload and /_export routes.
import { createHash, randomUUID } from 'node:crypto';
import type { Hash } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { access, constants, cp, mkdir, open, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { readBuffer } from '../../shared/read-buffer.js';
import type { DataDirPaths } from '../datadir.js';
import { fail } from '../errors.js';
import { checkPresigned, presignPath } from './presign.js';
import type { BlobStore, BuildRow, ExportFile, GameObjects, LocalObjectIndex, NewUpload, ReceivedPart, UploadRow } from './store.js';

/** Hashes and counts what flows through. */
function digestStream(hash: ReturnType<typeof createHash>, counter: { bytes: number }): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      counter.bytes += chunk.length;
      callback(null, chunk);
    },
  });
}

/** The bytes on disk must be the bytes that were PUT: a part changed since is refused, naming it. */
function checkPartDigest(upload: UploadRow, n: number, part: ReceivedPart | undefined, digest: string): void {
  if (part === undefined || part.etag !== digest)
    fail(
      'UPLOAD_INVALID',
      { reason: `part ${n} of ${upload.part_count} does not match the bytes uploaded for it; upload it again.` },
      { part_number: n },
    );
}

/**
 * A file's private name while it is written, then renamed into place: a part's (`part-<n>.tmp-<uuid>`), a copy made
 * where a rename cannot go (`move`), and the one-file build a gamehost before schema version 22 assembled (those two
 * in builds/, `<build_id>.tmp-<uuid>`, swept when left).
 */
const TEMP_MARK = '.tmp-';

/** What a build's check reads at a time. */
const BLOCK = 4 * 1024 * 1024;

/**
 * Reads `file` from `start` for `length` bytes (to its end when Infinity) in large reads into `buf`, each given to
 * every hash, then to `each`, which is done with it when it settles (64 KiB reads through a ReadStream made the check
 * of a 1 GiB build take seconds more).
 */
async function readHashing(file: string, start: number, length: number, buf: Buffer, hashes: Hash[], each?: (chunk: Buffer) => Promise<void>): Promise<void> {
  const from = await open(file, 'r');
  try {
    for (let done = 0; done < length; ) {
      const { bytesRead } = await from.read(buf, 0, Math.min(buf.length, length - done), start + done);
      if (bytesRead === 0) break;
      const chunk = buf.subarray(0, bytesRead);
      for (const hash of hashes) hash.update(chunk);
      await each?.(chunk);
      done += bytesRead;
    }
  } finally {
    await from.close();
  }
}

/** `length` bytes of `file` from `start` copied into a file of their own at `to` (a temp file, then renamed). */
async function copyRange(file: string, start: number, length: number, to: string): Promise<void> {
  const temp = `${to}${TEMP_MARK}${randomUUID()}`;
  const out = await open(temp, 'w', 0o600);
  try {
    let at = 0;
    await readHashing(file, start, length, readBuffer(BLOCK), [], async (chunk) => {
      for (let written = 0; written < chunk.length; ) written += (await out.write(chunk, written, chunk.length - written, at + written)).bytesWritten;
      at += chunk.length;
    });
    await out.close();
    await rename(temp, to);
  } catch (err) {
    await out.close().catch(() => {});
    await rm(temp, { force: true });
    throw err;
  }
}

/**
 * What identifies a file's bytes as long as nobody writes to it: its device, inode, size and modification time (a
 * rename keeps them; a write, a truncation or another file in its place changes one).
 */
async function stampOf(file: string): Promise<string> {
  const s = await stat(file, { bigint: true });
  return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}`;
}

/**
 * `from` (a file or a directory) moved to `to`: renamed, or, where the two are on different filesystems (builds/ a
 * mount or a link to another disk), copied to a temp name beside `to`, renamed into place, then removed. Either way
 * a process that dies in it leaves `from` whole, or `to` whole.
 */
async function move(from: string, to: string): Promise<void> {
  try {
    return await rename(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
  }
  const temp = `${to}${TEMP_MARK}${randomUUID()}`;
  try {
    await cp(from, temp, { recursive: true, errorOnExist: true, force: false });
    await rename(temp, to);
  } catch (err) {
    await rm(temp, { recursive: true, force: true });
    throw err;
  }
  await rm(from, { recursive: true, force: true });
}

/**
 * When `path` was last written to, or Infinity when it is not there: for a directory (a copy across filesystems, see
 * move), the latest of it and its files, as a copy of one large part writes that part, not its directory.
 */
async function lastWritten(path: string): Promise<number> {
  const found = await stat(path).catch(() => undefined);
  if (found === undefined) return Infinity;
  if (!found.isDirectory()) return found.mtimeMs;
  const names = await readdir(path).catch(() => [] as string[]);
  const times = await Promise.all(names.map((name) => lastWritten(join(path, name))));
  return Math.max(found.mtimeMs, ...times.filter((t) => t !== Infinity));
}

/** A file's size, or null when it is not there. */
function sizeOf(file: string): Promise<number | null> {
  return stat(file).then(
    (s) => s.size,
    () => null,
  );
}

/**
 * The files a build is, in order, and their bytes together: itself when it is a file, its parts when it is a
 * directory of them.
 */
async function buildFiles(path: string): Promise<{ files: string[]; size: number }> {
  const found = await stat(path);
  if (!found.isDirectory()) return { files: [path], size: found.size };
  const numbers = (await readdir(path))
    .map((name) => /^part-([1-9]\d*)$/.exec(name)?.[1])
    .filter((n) => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
  if (numbers.length === 0 || numbers.some((n, i) => n !== i + 1)) throw new Error(`${path}: the build's parts are not all there`);
  const files = numbers.map((n) => join(path, `part-${n}`));
  let size = 0;
  for (const file of files) size += (await stat(file)).size;
  return { files, size };
}

export class LocalBlobStore implements BlobStore {
  constructor(
    private readonly paths: DataDirPaths,
    private readonly secret: Buffer,
    private readonly index: LocalObjectIndex,
  ) {}

  private uploadDir(uploadId: string): string {
    return join(this.paths.uploads, uploadId);
  }

  private partFile(uploadId: string, n: number): string {
    return join(this.uploadDir(uploadId), `part-${n}`);
  }

  async openUpload(origin: string, upload: NewUpload, _now: number, expiresTs: number): Promise<string[]> {
    const urls: string[] = [];
    for (let n = 1; n <= upload.part_count; n++)
      urls.push(origin + presignPath(this.secret, 'PUT', `/_upload/${upload.upload_id}/${n}`, expiresTs));
    return urls;
  }

  async abortUpload(upload: NewUpload): Promise<void> {
    await rm(this.uploadDir(upload.upload_id), { recursive: true, force: true });
  }

  async exportUrl(origin: string, exportId: string, _gameId: string, _now: number, expiresTs: number, file: ExportFile = 'export.csv'): Promise<string> {
    return origin + presignPath(this.secret, 'GET', `/_export/${exportId}/${file}`, expiresTs);
  }

  async checkPresigned(method: string, path: string, query: URLSearchParams, now: number): Promise<void> {
    checkPresigned(this.secret, method, path, query, now);
  }

  async writePart(uploadId: string, n: number, length: number, body: AsyncIterable<Buffer>, now: number): Promise<ReceivedPart> {
    await mkdir(this.uploadDir(uploadId), { recursive: true, mode: 0o700 });
    const target = this.partFile(uploadId, n);
    // A private temp name, then rename: re-sent or concurrent parts never interleave, and the last write wins.
    const temp = `${target}${TEMP_MARK}${randomUUID()}`;
    const hash = createHash('sha256');
    const counter = { bytes: 0 };
    let stamp: string;
    try {
      // Up to 1 MiB held for the disk (a 64 KiB socket read at a time, written together), not 16 KiB: with the
      // default each read waited for its own write; 1 GiB in 11 parts arrived at 380-500 MiB/s, against 290-385.
      await pipeline(body, digestStream(hash, counter), createWriteStream(temp, { mode: 0o600, highWaterMark: 1024 * 1024 }));
      if (counter.bytes !== length)
        fail('UPLOAD_INVALID', { reason: `part ${n} ended after ${counter.bytes} of ${length} bytes.` }, { part_number: n });
      // Of this file, before another PUT of the part may take its name.
      stamp = await stampOf(temp);
      await rename(temp, target);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
    const sha256 = hash.digest('hex');
    await this.index.recordPart(uploadId, n, counter.bytes, sha256, stamp, now);
    return { size: counter.bytes, etag: sha256 };
  }

  async discardPart(uploadId: string, n: number): Promise<void> {
    await rm(this.partFile(uploadId, n), { force: true });
    // Its directory too, unless another part is (still) in it.
    await rmdir(this.uploadDir(uploadId)).catch(() => {});
  }

  async receivedParts(upload: NewUpload): Promise<Map<number, ReceivedPart>> {
    const received = new Map<number, ReceivedPart>();
    const listed = await this.index.listParts(upload.upload_id);
    // Parts moved into place by a process that died before recording the build complete (all of them, or some if it
    // died while an assembly took them back) are where it left them, each in one place or the other.
    const placed = await this.inPlace(upload);
    for (const part of listed) {
      const n = part.part_number;
      const onDisk = (await this.sizeOnDisk(upload.upload_id, n)) ?? (placed === 'parts' ? await sizeOf(join(this.paths.builds, upload.build_id, `part-${n}`)) : null);
      if (onDisk !== null) received.set(n, { size: onDisk, etag: part.sha256, stamp: part.stamp });
    }
    // Parts gone from disk but a whole one-file build in place (one part moved there, or a build of a gamehost before
    // schema version 22): each part is then what was PUT for it as far as the records go; assemble() checks the bytes.
    if (placed === 'file') for (const part of listed) if (!received.has(part.part_number)) received.set(part.part_number, { size: part.size, etag: part.sha256 });
    return received;
  }

  async readBuild(build: Pick<BuildRow, 'build_id' | 'content_length'>): Promise<Readable> {
    const path = join(this.paths.builds, build.build_id);
    const { files, size } = await buildFiles(path);
    if (size !== build.content_length) throw new Error(`${path}: ${size} bytes where ${build.content_length} were pushed`);
    const [first, ...rest] = files;
    const stream = createReadStream(first!);
    // Opened before it is handed on, so a missing file is this call's error, not a stream's later one.
    await once(stream, 'open');
    if (rest.length === 0) return stream;
    async function* parts() {
      yield* stream;
      for (const file of rest) yield* createReadStream(file);
    }
    return Readable.from(parts(), { objectMode: false });
  }

  /**
   * The build in place of an upload not recorded complete (its process died first), if any: a directory of its parts,
   * or a whole file (its one part, or what a gamehost before schema version 22 assembled); anything else is not one.
   */
  private async inPlace(upload: NewUpload): Promise<'parts' | 'file' | undefined> {
    const found = await stat(join(this.paths.builds, upload.build_id)).catch(() => undefined);
    if (found?.isDirectory()) return 'parts';
    return found?.size === upload.content_length ? 'file' : undefined;
  }

  private sizeOnDisk(uploadId: string, n: number): Promise<number | null> {
    return sizeOf(this.partFile(uploadId, n));
  }

  async assemble(upload: UploadRow, parts: Map<number, ReceivedPart>, progress: () => Promise<void>): Promise<string> {
    const target = join(this.paths.builds, upload.build_id);
    const hash = createHash('sha256');
    const buf = readBuffer(BLOCK);
    // A process that put the build in place, then died before it was recorded complete, moved some or all of the
    // parts: those are taken back from the build (and checked like any part).
    const placed = await this.inPlace(upload);
    if (upload.part_count === 1) {
      // One part is already the whole file: moved into place (unless a process that died had moved it), then hashed
      // there, so a PUT of the part still arriving cannot replace it once read.
      const part = this.partFile(upload.upload_id, 1);
      if (!(placed === 'file' && (await this.sizeOnDisk(upload.upload_id, 1)) === null)) await move(part, target);
      let digest: string;
      try {
        await readHashing(target, 0, Infinity, buf, [hash]);
        digest = hash.digest('hex');
        checkPartDigest(upload, 1, parts.get(1), digest);
      } catch (err) {
        // Back where a part sent again replaces it (unless one was sent since: that one is newer).
        if ((await this.sizeOnDisk(upload.upload_id, 1)) === null) {
          await mkdir(this.uploadDir(upload.upload_id), { recursive: true, mode: 0o700 });
          await move(target, part);
        } else await rm(target, { force: true });
        throw err;
      }
      await rm(this.uploadDir(upload.upload_id), { recursive: true, force: true });
      return digest;
    }
    // The claim is ours: a temp file of this build is what an assembly whose process died left (a gamehost before
    // schema version 22 wrote the build through one).
    await this.removeTemps(upload.build_id);
    if (placed !== undefined) await this.takeBackParts(upload, target, placed);
    // The parts are the build: their directory is moved into place first (nothing copied, unless builds/ is on another
    // filesystem: see move), then each part checked there. A PUT of a part still arriving then finds no directory to
    // rename into, so no part changes once read. Whatever was at the build's name is not a whole build (a whole one's
    // parts were taken back above), and every byte of it is in the parts.
    await rm(target, { recursive: true, force: true });
    await move(this.uploadDir(upload.upload_id), target);
    try {
      for (let n = 1; n <= upload.part_count; n++) {
        const file = join(target, `part-${n}`);
        const part = parts.get(n);
        // A part's file as it was when its bytes were hashed on arrival still holds them: hashed once, for the build
        // (a second SHA-256 of each part cost 0.6 s a GiB). Any other is hashed again and must match what was PUT.
        const partHash = part?.stamp != null && part.stamp === (await stampOf(file).catch(() => null)) ? undefined : createHash('sha256');
        // Read to its end, so a part file grown since is refused by its digest like any other change.
        await readHashing(file, 0, Infinity, buf, partHash === undefined ? [hash] : [hash, partHash]);
        if (partHash !== undefined) checkPartDigest(upload, n, part, partHash.digest('hex'));
        await progress();
      }
    } catch (err) {
      // Refused (or failed): the parts go back where a part sent again replaces its own; what cannot, the next
      // assembly takes back.
      await this.takeBackParts(upload, target, 'parts').catch(() => {});
      throw err;
    }
    // The temp file of a PUT that was still arriving came along: no part of the build (that PUT fails).
    for (const name of await readdir(target)) if (name.includes(TEMP_MARK)) await rm(join(target, name), { force: true });
    return hash.digest('hex');
  }

  /**
   * The parts of a build in place that uploads/ no longer has, back where its parts are (a part sent again since is
   * newer, and stays), then the build removed: each moved back from a build of parts, or copied out of a build that a
   * gamehost before schema version 22 wrote as one file. Each part is in one place or the other at every moment, so a
   * process that dies here leaves what the next one takes back. An assembly then reads and moves the upload's parts.
   */
  private async takeBackParts(upload: UploadRow, target: string, placed: 'parts' | 'file'): Promise<void> {
    await mkdir(this.uploadDir(upload.upload_id), { recursive: true, mode: 0o700 });
    for (let n = 1, start = 0; n <= upload.part_count; n++) {
      const length = Math.min(upload.part_size, upload.content_length - start);
      const part = this.partFile(upload.upload_id, n);
      if ((await this.sizeOnDisk(upload.upload_id, n)) === null) {
        if (placed === 'parts') await move(join(target, `part-${n}`), part);
        else await copyRange(target, start, length, part);
      }
      start += length;
    }
    await rm(target, { recursive: true, force: true });
  }

  async putExport(exportId: string, gameId: string, csv: string, now: number, expiresTs: number): Promise<void> {
    await this.index.insertExport(exportId, gameId, csv, now, expiresTs);
  }

  async deleteGameObjects(objects: GameObjects): Promise<number> {
    // Exports live in the store's index, which the purge empties (and counts); the files are builds and upload parts.
    for (const { build_id, upload_id } of objects.builds) {
      await rm(join(this.paths.builds, build_id), { recursive: true, force: true });
      await this.removeTemps(build_id);
      await rm(this.uploadDir(upload_id), { recursive: true, force: true });
    }
    return 0;
  }

  /** The names of the temp files in builds/, of one build or of all. */
  private async temps(buildId?: string): Promise<string[]> {
    const prefix = buildId === undefined ? '' : `${buildId}${TEMP_MARK}`;
    const names = await readdir(this.paths.builds).catch(() => [] as string[]);
    return names.filter((name) => name.includes(TEMP_MARK) && name.startsWith(prefix));
  }

  private async removeTemps(buildId: string): Promise<void> {
    for (const name of await this.temps(buildId)) await rm(join(this.paths.builds, name), { recursive: true, force: true });
  }

  async removeLeftovers(writtenBefore: number): Promise<number> {
    let removed = 0;
    for (const name of await this.temps()) {
      const file = join(this.paths.builds, name);
      // A live assembly writes its temp file all the time; one not written to for a while has lost its process.
      if ((await lastWritten(file)) >= writtenBefore) continue;
      await rm(file, { recursive: true, force: true });
      removed++;
    }
    return removed;
  }

  async readExport(exportId: string): Promise<string | undefined> {
    return (await this.index.getExport(exportId))?.csv;
  }

  async ping(): Promise<void> {
    // Parts and builds are written here; both must still be writable directories.
    for (const dir of [this.paths.uploads, this.paths.builds]) await access(dir, constants.R_OK | constants.W_OK | constants.X_OK);
  }
}
