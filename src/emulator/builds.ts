// Builds and their uploads: create (with presigned part URLs), the part PUT, complete, and the admin list.
import { createHash, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { requireCloud } from './auth.js';
import {
  baseUrl,
  declaredLength,
  optBoolean,
  optEnum,
  optString,
  readJson,
  reqInteger,
  reqString,
  type JsonObject,
} from './body.js';
import type { EmulatorConfig } from './config.js';
import type { Reply, RequestContext } from './context.js';
import { fail } from './errors.js';
import { UPLOAD_MULTIPART_TTL_MS, UPLOAD_SINGLE_TTL_MS, checkPresigned, presignPath } from './presign.js';
import { isUniqueViolation, type BuildRow, type PartRow, type UploadRow } from './store.js';

export const MAX_PARTS = 10_000;
export const BUILD_KINDS = ['docker_image', 'oci_bundle'] as const;
export const BUILD_COMPRESSIONS = ['none', 'lz4'] as const;
const DISPLAY_NAME_MAX_BYTES = 128;
const IMAGE_TAG_PART_RE = /^[0-9a-z_-]+$/;
// A crashed assembler's claim is taken over after this long.
const ASSEMBLY_STALE_MS = 5 * 60 * 1000;
const ASSEMBLY_POLL_MS = 50;

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

export async function createBuild(rc: RequestContext): Promise<Reply> {
  const { config, secret, store } = rc.emu;
  const gameId = rc.params.game_id!;
  requireCloud(rc, gameId);
  const body = await readJson(rc);

  const displayName = reqString(body, 'display_name');
  const imageTag = reqString(body, 'image_tag');
  const imageFile = body.image_file;
  if (typeof imageFile !== 'object' || imageFile === null || Array.isArray(imageFile))
    fail('API_BAD_BODY', { reason: 'image_file is required and must be an object.' });
  const file = imageFile as JsonObject;
  const path = reqString(file, 'path');
  const contentType = optString(file, 'content_type') ?? null;
  const contentLength = reqInteger(file, 'content_length');
  if (contentLength < 0) fail('API_BAD_BODY', { reason: 'image_file.content_length must not be negative.' });
  // The flag is accepted and ignored, as production has done since late 2024.
  optBoolean(body, 'multipart_upload');
  const kind = optEnum(body, 'kind', BUILD_KINDS) ?? 'docker_image';
  const compression = optEnum(body, 'compression', BUILD_COMPRESSIONS) ?? 'none';

  checkDisplayName(displayName);
  checkImageTag(imageTag);
  if (path.length === 0) fail('UPLOAD_INVALID', { reason: 'image_file.path must not be empty.' });
  if (contentLength >= config.maxUploadBytes)
    fail('UPLOAD_TOO_LARGE', { reason: `${contentLength} bytes; the limit is below ${config.maxUploadBytes}.` });
  const plan = planParts(contentLength, config);
  if (plan === null) fail('UPLOAD_TOO_LARGE', { reason: `it would take more than ${MAX_PARTS} parts.` });

  const buildId = randomUUID();
  const uploadId = randomUUID();
  try {
    store.insertBuild(
      {
        build_id: buildId,
        game_id: gameId,
        upload_id: uploadId,
        display_name: displayName,
        image_tag: imageTag,
        kind,
        compression,
        path,
        content_type: contentType,
        content_length: contentLength,
        sha256: null,
        complete: 0,
        create_ts: rc.now,
        complete_ts: null,
      },
      { upload_id: uploadId, build_id: buildId, content_length: contentLength, part_size: plan.partSize, part_count: plan.partCount },
    );
  } catch (err) {
    if (isUniqueViolation(err)) fail('BUILD_TAG_TAKEN', { tag: imageTag });
    throw err;
  }

  const expires = rc.now + (plan.partCount > 1 ? UPLOAD_MULTIPART_TTL_MS : UPLOAD_SINGLE_TTL_MS);
  const base = baseUrl(rc);
  const upload = { content_length: contentLength, part_size: plan.partSize };
  const requests = [];
  for (let n = 1; n <= plan.partCount; n++) {
    const { offset, length } = partRange(upload, n);
    requests.push({
      path,
      url: base + presignPath(secret, 'PUT', `/_upload/${uploadId}/${n}`, expires),
      byte_offset: offset,
      content_length: length,
    });
  }
  return { status: 200, json: { build_id: buildId, upload_id: uploadId, image_presigned_requests: requests } };
}

function partFile(rc: RequestContext, uploadId: string, n: number): string {
  return join(rc.emu.paths.uploads, uploadId, `part-${n}`);
}

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

/** PUT /_upload/{upload_id}/{part}: S3-like; no token, the presigned signature instead. */
export async function putPart(rc: RequestContext): Promise<Reply> {
  const uploadId = rc.params.upload_id!;
  const n = Number(rc.params.part_number);
  // Anything refused before reading the body closes the connection instead of draining up to 100 MiB.
  rc.res.setHeader('connection', 'close');
  checkPresigned(rc.emu.secret, 'PUT', rc.path, rc.query, rc.now);
  const upload = rc.emu.store.getUpload(uploadId);
  if (upload === undefined) fail('API_NOT_FOUND', { what: `Upload ${uploadId}` });
  if (n > upload.part_count)
    fail('UPLOAD_INVALID', { reason: `part ${n} is beyond the ${upload.part_count} parts of this upload.` });
  if (upload.state !== 'pending') fail('UPLOAD_INVALID', { reason: `the upload is already ${upload.state}.` });
  const expected = partRange(upload, n).length;
  const length = declaredLength(rc, 'UPLOAD_INVALID');
  if (length !== expected)
    fail('UPLOAD_INVALID', { reason: `part ${n} must be ${expected} bytes; Content-Length says ${length}.` }, { part_number: n });
  rc.res.removeHeader('connection');

  mkdirSync(join(rc.emu.paths.uploads, uploadId), { recursive: true, mode: 0o700 });
  const target = partFile(rc, uploadId, n);
  // A private temp name, then rename: re-sent or concurrent parts never interleave, and the last write wins.
  const temp = `${target}.tmp-${randomUUID()}`;
  const hash = createHash('sha256');
  const counter = { bytes: 0 };
  try {
    await pipeline(rc.req, digestStream(hash, counter), createWriteStream(temp, { mode: 0o600 }));
    if (counter.bytes !== expected)
      fail('UPLOAD_INVALID', { reason: `part ${n} ended after ${counter.bytes} of ${expected} bytes.` }, { part_number: n });
    renameSync(temp, target);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
  const sha256 = hash.digest('hex');
  rc.emu.store.recordPart(uploadId, n, counter.bytes, sha256, Date.now());
  return { status: 200, headers: { etag: `"${sha256}"` }, body: '' };
}

/** Every part present on disk and in the store with its planned size, else UPLOAD_INVALID naming the part. */
function checkParts(rc: RequestContext, upload: UploadRow): Map<number, PartRow> {
  const recorded = new Map(rc.emu.store.listParts(upload.upload_id).map((p) => [p.part_number, p]));
  for (let n = 1; n <= upload.part_count; n++) {
    const expected = partRange(upload, n).length;
    const part = recorded.get(n);
    let onDisk: number | null = null;
    try {
      onDisk = statSync(partFile(rc, upload.upload_id, n)).size;
    } catch {
      onDisk = null;
    }
    if (part === undefined || onDisk === null)
      fail('UPLOAD_INVALID', { reason: `part ${n} of ${upload.part_count} is missing.` }, { part_number: n });
    if (part.size !== expected || onDisk !== expected)
      fail(
        'UPLOAD_INVALID',
        { reason: `part ${n} of ${upload.part_count} has ${onDisk} bytes; expected ${expected}.` },
        { part_number: n },
      );
  }
  return recorded;
}

/** The bytes on disk must be the bytes that were PUT: a part changed since is refused, naming it. */
function checkPartDigest(upload: UploadRow, n: number, part: PartRow | undefined, digest: string): void {
  if (part === undefined || part.sha256 !== digest)
    fail(
      'UPLOAD_INVALID',
      { reason: `part ${n} of ${upload.part_count} does not match the bytes uploaded for it; upload it again.` },
      { part_number: n },
    );
}

/**
 * Concatenates the parts into builds/<build_id>, checking each part against the digest of its PUT (sizes were
 * checked before, so the whole is content_length), hashing the file; then removes the parts.
 */
async function assemble(rc: RequestContext, upload: UploadRow, parts: Map<number, PartRow>): Promise<string> {
  const target = join(rc.emu.paths.builds, upload.build_id);
  const hash = createHash('sha256');
  if (upload.part_count === 1) {
    // One part is already the whole file: hash it and move it into place.
    const part = partFile(rc, upload.upload_id, 1);
    for await (const chunk of createReadStream(part)) hash.update(chunk as Buffer);
    const digest = hash.digest('hex');
    checkPartDigest(upload, 1, parts.get(1), digest);
    renameSync(part, target);
    rmSync(join(rc.emu.paths.uploads, upload.upload_id), { recursive: true, force: true });
    return digest;
  }
  const temp = `${target}.tmp-${randomUUID()}`;
  const out = createWriteStream(temp, { mode: 0o600 });
  try {
    for (let n = 1; n <= upload.part_count; n++) {
      const partHash = createHash('sha256');
      for await (const chunk of createReadStream(partFile(rc, upload.upload_id, n))) {
        hash.update(chunk as Buffer);
        partHash.update(chunk as Buffer);
        if (!out.write(chunk)) await once(out, 'drain');
      }
      checkPartDigest(upload, n, parts.get(n), partHash.digest('hex'));
      rc.emu.store.touchClaim(upload.upload_id, Date.now());
    }
    out.end();
    await finished(out);
    renameSync(temp, target);
  } catch (err) {
    out.destroy();
    rmSync(temp, { force: true });
    throw err;
  }
  rmSync(join(rc.emu.paths.uploads, upload.upload_id), { recursive: true, force: true });
  return hash.digest('hex');
}

/** POST /cloud/uploads/{upload_id}/complete: 200 `{}` as the real server answers (the spec says 204). */
export async function completeUpload(rc: RequestContext): Promise<Reply> {
  const { store } = rc.emu;
  const claims = requireCloud(rc, undefined);
  await readJson(rc, { emptyIsObject: true });
  const uploadId = rc.params.upload_id!;
  let upload = store.getUpload(uploadId);
  if (upload === undefined) fail('API_NOT_FOUND', { what: `Upload ${uploadId}` });
  if (upload.game_id !== claims.game_id) fail('API_FORBIDDEN', { reason: 'the upload belongs to another game.' });

  for (;;) {
    if (upload.state === 'complete') return { status: 200, json: {} };
    const stale = upload.state === 'assembling' && (upload.claim_ts ?? 0) < Date.now() - ASSEMBLY_STALE_MS;
    // Parts are only checked while nobody is assembling (an assembler deletes them as it finishes).
    if (upload.state === 'pending' || stale) {
      const parts = checkParts(rc, upload);
      if (store.claimUpload(uploadId, Date.now(), ASSEMBLY_STALE_MS)) {
        try {
          const sha256 = await assemble(rc, upload, parts);
          store.completeUpload(upload, sha256, upload.content_length, Date.now());
        } catch (err) {
          store.releaseUpload(uploadId);
          throw err;
        }
        return { status: 200, json: {} };
      }
    }
    // Another request, maybe in another process, is assembling: wait for its outcome.
    await new Promise((resolve) => setTimeout(resolve, ASSEMBLY_POLL_MS));
    upload = store.getUpload(uploadId)!;
  }
}

export function buildView(b: BuildRow): JsonObject {
  return {
    build_id: b.build_id,
    image_tag: b.image_tag,
    display_name: b.display_name,
    kind: b.kind,
    compression: b.compression,
    content_length: b.content_length,
    sha256: b.sha256,
    complete: b.complete === 1,
    create_ts: new Date(b.create_ts).toISOString(),
  };
}

export function adminListBuilds(rc: RequestContext): Reply {
  return { status: 200, json: { builds: rc.emu.store.listBuilds().map(buildView) } };
}
