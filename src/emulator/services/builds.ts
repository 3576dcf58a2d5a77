// Builds and their uploads: create (with presigned part URLs), accepting a part, complete, and the list.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EmulatorConfig } from '../config.js';
import { EmulatorError, fail } from '../errors.js';
import type { Faults } from '../faults.js';
import type { BlobStore, BuildObject, BuildRow, ReceivedPart, Store, UploadRow } from '../stores/store.js';
import type { Clock } from './clock.js';
import { GAME_ID } from './ids.js';

export const MAX_PARTS = 10_000;
export const BUILD_KINDS = ['docker_image', 'oci_bundle'] as const;
export const BUILD_COMPRESSIONS = ['none', 'lz4'] as const;
const UPLOAD_SINGLE_TTL_MS = 60 * 60 * 1000;
const UPLOAD_MULTIPART_TTL_MS = 6 * 60 * 60 * 1000;
const DISPLAY_NAME_MAX_BYTES = 128;
const IMAGE_TAG_PART_RE = /^[0-9a-z_-]+$/;
// An assembler refreshes its claim this often; one not refreshed for ASSEMBLY_STALE_MS has lost its process.
const ASSEMBLY_REFRESH_MS = 1_000;
export const ASSEMBLY_STALE_MS = 5_000;
// What a complete that meets a live claim is told to wait before asking again.
const ASSEMBLY_RETRY_AFTER_S = 1;

/** A build create as the client asked for it, its shape already checked. */
export interface BuildRequest {
  displayName: string;
  imageTag: string;
  kind: (typeof BUILD_KINDS)[number];
  compression: (typeof BUILD_COMPRESSIONS)[number];
  path: string;
  contentType: string | null;
  contentLength: number;
}

export interface PresignedRequest {
  path: string;
  url: string;
  byte_offset: number;
  content_length: number;
}

export interface CreatedBuild {
  buildId: string;
  uploadId: string;
  requests: PresignedRequest[];
}

function checkDisplayName(name: string): void {
  let reason: string | null = null;
  if (name.length === 0) reason = 'it must not be empty.';
  else if (Buffer.byteLength(name) > DISPLAY_NAME_MAX_BYTES) reason = `it must be at most ${DISPLAY_NAME_MAX_BYTES} bytes.`;
  else if (/^\s|\s$/.test(name)) reason = 'it must not start or end with whitespace.';
  else if (/\s\s/.test(name)) reason = 'it must not contain doubled whitespace.';
  if (reason !== null) fail('BUILD_INVALID_DISPLAY_NAME', { reason });
}

function checkImageTag(tag: string): void {
  const parts = tag.split(':');
  let reason: string | null = null;
  if (parts.length !== 2) reason = 'expected base:tag.';
  else
    for (const part of parts) {
      if (!IMAGE_TAG_PART_RE.test(part)) reason = 'each part must be lowercase letters, digits, "_" or "-".';
      else if (part.startsWith('-') || part.endsWith('-')) reason = 'a part must not start or end with "-".';
      if (reason !== null) break;
    }
  if (reason !== null) fail('BUILD_INVALID_IMAGE_TAG', { tag, reason });
}

/** Part n (1-based) of an upload: where it starts and how long it is. */
export function partRange(upload: Pick<UploadRow, 'content_length' | 'part_size'>, n: number): { offset: number; length: number } {
  const offset = (n - 1) * upload.part_size;
  return { offset, length: Math.min(upload.part_size, upload.content_length - offset) };
}

/** One part below singlePartMax, else parts of partSize (the last shorter); null when over MAX_PARTS. */
export function planParts(contentLength: number, config: EmulatorConfig): { partSize: number; partCount: number } | null {
  if (contentLength < config.singlePartMax) return { partSize: Math.max(contentLength, 1), partCount: 1 };
  const partCount = Math.ceil(contentLength / config.partSize);
  return partCount > MAX_PARTS ? null : { partSize: config.partSize, partCount };
}

/** Every part arrived with its planned size, else UPLOAD_INVALID naming the first that did not. */
function checkParts(upload: UploadRow, received: Map<number, ReceivedPart>): void {
  for (let n = 1; n <= upload.part_count; n++) {
    const expected = partRange(upload, n).length;
    const part = received.get(n);
    if (part === undefined) fail('UPLOAD_INVALID', { reason: `part ${n} of ${upload.part_count} is missing.` }, { part_number: n });
    if (part.size !== expected)
      fail(
        'UPLOAD_INVALID',
        { reason: `part ${n} of ${upload.part_count} has ${part.size} bytes; expected ${expected}.` },
        { part_number: n },
      );
  }
}

export class Builds {
  /** Told of each build deleted through delete (its image goes with it where builds run: runtime/images.ts). */
  onDeleted: ((buildId: string) => Promise<void>) | undefined;

  constructor(private readonly deps: { store: Store; blobs: BlobStore; clock: Clock; config: EmulatorConfig; faults?: Faults }) {}

  /** Records the build and its upload and answers one presigned request per part. */
  async create(gameId: string, request: BuildRequest, origin: string): Promise<CreatedBuild> {
    const { config, store, blobs } = this.deps;
    const now = this.deps.clock.now();
    const { contentLength, imageTag } = request;
    checkDisplayName(request.displayName);
    checkImageTag(imageTag);
    if (request.path.length === 0) fail('UPLOAD_INVALID', { reason: 'image_file.path must not be empty.' });
    if (contentLength >= config.maxUploadBytes)
      fail('UPLOAD_TOO_LARGE', { reason: `${contentLength} bytes; the limit is below ${config.maxUploadBytes}.` });
    const plan = planParts(contentLength, config);
    if (plan === null) fail('UPLOAD_TOO_LARGE', { reason: `it would take more than ${MAX_PARTS} parts.` });

    const buildId = randomUUID();
    const uploadId = randomUUID();
    const upload = { upload_id: uploadId, build_id: buildId, content_length: contentLength, part_size: plan.partSize, part_count: plan.partCount };
    const expires = now + (plan.partCount > 1 ? UPLOAD_MULTIPART_TTL_MS : UPLOAD_SINGLE_TTL_MS);
    // Opened before the build is recorded, so a recorded build always has somewhere for its bytes to go.
    const urls = await blobs.openUpload(origin, upload, now, expires);
    let inserted: boolean;
    try {
      inserted = await store.insertBuild(
        {
          build_id: buildId,
          game_id: gameId,
          upload_id: uploadId,
          display_name: request.displayName,
          image_tag: imageTag,
          kind: request.kind,
          compression: request.compression,
          path: request.path,
          content_type: request.contentType,
          content_length: contentLength,
          sha256: null,
          complete: 0,
          create_ts: now,
          complete_ts: null,
        },
        upload,
      );
    } catch (err) {
      await blobs.abortUpload(upload).catch(() => {});
      throw err;
    }
    if (!inserted) {
      await blobs.abortUpload(upload);
      fail('BUILD_TAG_TAKEN', { tag: imageTag });
    }

    const requests = urls.map((url, i): PresignedRequest => {
      const { offset, length } = partRange(upload, i + 1);
      return { path: request.path, url, byte_offset: offset, content_length: length };
    });
    return { buildId, uploadId, requests };
  }

  /** The checks on a part PUT before its body is read; answers the length the part must have. */
  async acceptPart(uploadId: string, n: number, path: string, query: URLSearchParams): Promise<number> {
    await this.deps.blobs.checkPresigned('PUT', path, query, this.deps.clock.now());
    const upload = await this.deps.store.getUpload(uploadId);
    if (upload === undefined) fail('API_NOT_FOUND', { what: `Upload ${uploadId}` });
    if (n > upload.part_count)
      fail('UPLOAD_INVALID', { reason: `part ${n} is beyond the ${upload.part_count} parts of this upload.` });
    if (upload.state !== 'pending') fail('UPLOAD_INVALID', { reason: `the upload is already ${upload.state}.` });
    return partRange(upload, n).length;
  }

  /** Stores an accepted part's body; answers its SHA-256 (the part's ETag). */
  async writePart(uploadId: string, n: number, length: number, body: AsyncIterable<Buffer>): Promise<string> {
    const { store, blobs, clock } = this.deps;
    let written: ReceivedPart | undefined;
    let failure: unknown;
    try {
      written = await blobs.writePart(uploadId, n, length, body, clock.now());
    } catch (err) {
      failure = err;
    }
    // A refused body (EmulatorError) left nothing behind.
    if (failure instanceof EmulatorError) throw failure;
    // Anything else may have left the file (its record refused), and the upload may have moved on while the body
    // arrived: looked at once the part is down.
    const upload = await store.getUpload(uploadId);
    // A body still arriving when its game's deletion began may land after the purge took the upload's files (its
    // record then refused, the upload gone). A deletion begins (the game's row marked) before its purge, so either
    // this sees it and removes the part, or the purge came after and took it.
    const deleted = async (gameId: string) => {
      if (gameId === GAME_ID) return false;
      const game = await store.getGame(gameId);
      return game === undefined || game.delete_ts !== null;
    };
    if (upload === undefined || (await deleted(upload.game_id))) {
      await blobs.discardPart(uploadId, n);
      fail('API_NOT_FOUND', { what: `Upload ${uploadId}` });
    }
    // A completion began while the body arrived: refused as a PUT after it is (the assembly took the parts' directory,
    // so the part is no part of the build, or one checked against its record); once complete, its file is nobody's.
    if (upload.state !== 'pending') {
      if (upload.state === 'complete') await blobs.discardPart(uploadId, n);
      fail('UPLOAD_INVALID', { reason: `the upload is already ${upload.state}.` });
    }
    if (written === undefined) throw failure;
    return written.etag;
  }

  /**
   * Assembles the parts into the build, once. The request that claims the upload assembles it, refreshing its claim
   * while it works; a complete that meets a live claim (in any process) is answered at once with 429 and
   * Retry-After, never held open; a claim not refreshed for a few seconds belongs to a process that is gone
   * (Ctrl-C during an embedded emulator's assembly) and is taken over.
   */
  async complete(gameId: string, uploadId: string): Promise<void> {
    const { store, blobs } = this.deps;
    const upload = await store.getUpload(uploadId);
    if (upload === undefined) fail('API_NOT_FOUND', { what: `Upload ${uploadId}` });
    if (upload.game_id !== gameId) fail('API_FORBIDDEN', { reason: 'the upload belongs to another game.' });
    if (upload.state === 'complete') return;
    // Claims are about living processes: real time, whatever the emulator's clock says.
    const stale = upload.state === 'assembling' && (upload.claim_ts ?? 0) < Date.now() - ASSEMBLY_STALE_MS;
    // Parts are only checked while nobody is assembling (an assembler deletes them as it finishes).
    if (upload.state === 'pending' || stale) {
      const parts = await blobs.receivedParts(upload);
      checkParts(upload, parts);
      if (await store.claimUpload(uploadId, Date.now(), ASSEMBLY_STALE_MS)) return this.assemble(upload, parts);
      // Claimed by another request between our read and our claim: it may even have finished already.
      if ((await store.getUpload(uploadId))?.state === 'complete') return;
    }
    throw new EmulatorError('UPLOAD_COMPLETE_IN_PROGRESS', { upload_id: uploadId }, { retry_after_ms: ASSEMBLY_RETRY_AFTER_S * 1000 }, { 'retry-after': String(ASSEMBLY_RETRY_AFTER_S) });
  }

  /** Assembles a claimed upload, keeping the claim fresh until it is complete or let go. */
  private async assemble(upload: UploadRow, parts: Map<number, ReceivedPart>): Promise<void> {
    const { store, blobs, clock, faults } = this.deps;
    const touch = () => store.touchClaim(upload.upload_id, Date.now());
    const refresh = setInterval(() => touch().catch(() => {}), ASSEMBLY_REFRESH_MS);
    refresh.unref();
    try {
      await this.removeLeftovers();
      const sha256 = await blobs.assemble(upload, parts, async () => {
        if (faults?.assemblyDelayMs) await sleep(faults.assemblyDelayMs);
        await touch();
      });
      await store.completeUpload(upload, sha256, upload.content_length, clock.now());
    } catch (err) {
      await store.releaseUpload(upload.upload_id);
      throw err;
    } finally {
      clearInterval(refresh);
    }
  }

  /**
   * Removes what assemblies whose process died left (temp files not written to for as long as a claim lapses in);
   * at start and before each assembly, so a crash never leaves one behind for long.
   */
  async removeLeftovers(): Promise<number> {
    // Files are written in real time, whatever the emulator's clock says.
    return this.deps.blobs.removeLeftovers(Date.now() - ASSEMBLY_STALE_MS);
  }

  /** The builds of a game, newest first; uploads whose part URLs expired are swept first. */
  async list(gameId: string): Promise<BuildRow[]> {
    await this.sweep().catch(() => {});
    return this.deps.store.listBuilds(gameId);
  }

  /** Deletes a build: its records, then its bytes (the file, or what an unfinished upload received). */
  async delete(buildId: string): Promise<BuildObject> {
    const { store, blobs } = this.deps;
    const removed = await store.deleteBuild(buildId);
    if (removed === undefined) fail('API_NOT_FOUND', { what: `Build ${buildId}` });
    await blobs.deleteGameObjects({ game_id: removed.game_id, builds: [{ build_id: removed.build_id, upload_id: removed.upload_id }], export_ids: [] });
    await this.onDeleted?.(buildId);
    return removed;
  }

  /**
   * Uploads that never completed and whose part URLs have expired (6 h; a single URL's hour is within it) can no
   * longer finish: their builds, records and bytes go. One sweep at a time per process; a build another replica
   * swept first is skipped.
   */
  sweep(): Promise<number> {
    this.sweeping ??= (async () => {
      const { store, blobs, clock } = this.deps;
      let swept = 0;
      for (const stale of await store.staleUploads(clock.now() - UPLOAD_MULTIPART_TTL_MS)) {
        const removed = await store.deleteBuild(stale.build_id);
        if (removed === undefined) continue;
        await blobs.deleteGameObjects({ game_id: removed.game_id, builds: [{ build_id: removed.build_id, upload_id: removed.upload_id }], export_ids: [] });
        swept++;
      }
      return swept;
    })().finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private sweeping: Promise<number> | undefined;
}
