// The BlobStore in the data directory: parts under uploads/<upload_id>/part-<n>, builds under builds/<build_id>,
// exports in the store's index; presigned URLs point at the emulator's own /_upload and /_export routes.
import { createHash, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { access, constants, mkdir, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import type { DataDirPaths } from '../datadir.js';
import { fail } from '../errors.js';
import { checkPresigned, presignPath } from './presign.js';
import type { BlobStore, ExportFile, GameObjects, LocalObjectIndex, NewUpload, ReceivedPart, UploadRow } from './store.js';

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

/** An assembly writes `builds/<build_id>.tmp-<uuid>`, then renames it into place. */
const TEMP_MARK = '.tmp-';

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
    const temp = `${target}.tmp-${randomUUID()}`;
    const hash = createHash('sha256');
    const counter = { bytes: 0 };
    try {
      await pipeline(body, digestStream(hash, counter), createWriteStream(temp, { mode: 0o600 }));
      if (counter.bytes !== length)
        fail('UPLOAD_INVALID', { reason: `part ${n} ended after ${counter.bytes} of ${length} bytes.` }, { part_number: n });
      await rename(temp, target);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
    const sha256 = hash.digest('hex');
    await this.index.recordPart(uploadId, n, counter.bytes, sha256, now);
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
    for (const part of listed) {
      const onDisk = await this.sizeOnDisk(upload.upload_id, part.part_number);
      if (onDisk !== null) received.set(part.part_number, { size: onDisk, etag: part.sha256 });
    }
    // Parts gone from disk but the build in place: assembled by a process that died before recording it. Each
    // part is then what was PUT for it as far as the records go; assemble() checks the bytes.
    if (received.size < listed.length && (await this.assembledSize(upload)) === upload.content_length)
      for (const part of listed) if (!received.has(part.part_number)) received.set(part.part_number, { size: part.size, etag: part.sha256 });
    return received;
  }

  async readBuild(buildId: string): Promise<Readable> {
    const stream = createReadStream(join(this.paths.builds, buildId));
    // Opened before it is handed on, so a missing file is this call's error, not a stream's later one.
    await once(stream, 'open');
    return stream;
  }

  private async assembledSize(upload: NewUpload): Promise<number | null> {
    try {
      return (await stat(join(this.paths.builds, upload.build_id))).size;
    } catch {
      return null;
    }
  }

  private async sizeOnDisk(uploadId: string, n: number): Promise<number | null> {
    try {
      return (await stat(this.partFile(uploadId, n))).size;
    } catch {
      return null;
    }
  }

  async assemble(upload: UploadRow, parts: Map<number, ReceivedPart>, progress: () => Promise<void>): Promise<string> {
    const target = join(this.paths.builds, upload.build_id);
    const hash = createHash('sha256');
    // A process that put the build in place, then died before it was recorded complete, removed some or all of the
    // parts: those are read back from the build (and checked like any part).
    const built = (await this.assembledSize(upload)) === upload.content_length;
    const partOnDisk = async (n: number) => (await this.sizeOnDisk(upload.upload_id, n)) !== null;
    if (upload.part_count === 1) {
      // One part is already the whole file: hash it and move it into place.
      const part = this.partFile(upload.upload_id, 1);
      const moved = built && !(await partOnDisk(1));
      for await (const chunk of createReadStream(moved ? target : part)) hash.update(chunk as Buffer);
      const digest = hash.digest('hex');
      checkPartDigest(upload, 1, parts.get(1), digest);
      if (!moved) await rename(part, target);
      await rm(this.uploadDir(upload.upload_id), { recursive: true, force: true });
      return digest;
    }
    // The claim is ours: a temp file of this build is what an assembly whose process died left.
    await this.removeTemps(upload.build_id);
    const temp = `${target}${TEMP_MARK}${randomUUID()}`;
    const out = createWriteStream(temp, { mode: 0o600 });
    try {
      for (let n = 1, start = 0; n <= upload.part_count; n++) {
        const length = Math.min(upload.part_size, upload.content_length - start);
        const from = built && !(await partOnDisk(n)) ? createReadStream(target, { start, end: start + length - 1 }) : createReadStream(this.partFile(upload.upload_id, n));
        const partHash = createHash('sha256');
        for await (const chunk of from) {
          hash.update(chunk as Buffer);
          partHash.update(chunk as Buffer);
          if (!out.write(chunk)) await once(out, 'drain');
        }
        checkPartDigest(upload, n, parts.get(n), partHash.digest('hex'));
        start += length;
        await progress();
      }
      out.end();
      await finished(out);
      await rename(temp, target);
    } catch (err) {
      // A write may still be in flight: it settles (with the error this destroy gives it, which is ours to drop)
      // before the file goes, so nothing is left unhandled and nothing writes to a removed file.
      out.destroy();
      await finished(out).catch(() => {});
      await rm(temp, { force: true });
      throw err;
    }
    await rm(this.uploadDir(upload.upload_id), { recursive: true, force: true });
    return hash.digest('hex');
  }

  async putExport(exportId: string, gameId: string, csv: string, now: number, expiresTs: number): Promise<void> {
    await this.index.insertExport(exportId, gameId, csv, now, expiresTs);
  }

  async deleteGameObjects(objects: GameObjects): Promise<number> {
    // Exports live in the store's index, which the purge empties (and counts); the files are builds and upload parts.
    for (const { build_id, upload_id } of objects.builds) {
      await rm(join(this.paths.builds, build_id), { force: true });
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
    for (const name of await this.temps(buildId)) await rm(join(this.paths.builds, name), { force: true });
  }

  async removeLeftovers(writtenBefore: number): Promise<number> {
    let removed = 0;
    for (const name of await this.temps()) {
      const file = join(this.paths.builds, name);
      // A live assembly writes its temp file all the time; one not written to for a while has lost its process.
      const written = await stat(file).then((s) => s.mtimeMs, () => Infinity);
      if (written >= writtenBefore) continue;
      await rm(file, { force: true });
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
