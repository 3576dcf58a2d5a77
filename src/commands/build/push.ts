import fs from 'node:fs';
import path from 'node:path';
import type { Context } from '../../context.js';
import { completeUpload, createBuild } from '../../api/operations.js';
import { BUILD_COMPRESSIONS, BUILD_KINDS, type BuildCompression, type BuildKind } from '../../api/types.js';
import { UploadError, UsageError } from '../../errors.js';
import { writeJson } from '../../output/json.js';
import { renderPushed } from '../../output/views/build.js';
import { uploadParts } from '../../upload/engine.js';
import { sha256File } from '../../upload/hash.js';
import { partsFrom } from '../../upload/plan.js';
import { describeFsError, parseChoice, parseInteger } from '../args.js';

/** The service refuses content_length of 8 GB or more (UPLOAD_TOO_LARGE). */
export const MAX_BUILD_BYTES = 8_000_000_000;
const TAG_PART = /^(?!-)[0-9a-z_-]+(?<!-)$/;

export interface PushOptions {
  file: string;
  size: number;
  mtimeMs: number;
  tag: string;
  name: string;
  kind: BuildKind;
  compression: BuildCompression;
  contentType: string;
  concurrency: number;
  stallMs: number;
}

export interface PushResult {
  build_id: string;
  upload_id: string;
  bytes: number;
  sha256: string;
  parts: number;
  duration_ms: number;
}

export function validateTag(tag: string): string {
  const sides = tag.split(':');
  if (sides.length !== 2 || !sides.every((s) => TAG_PART.test(s))) {
    throw new UsageError(
      `--tag must be name:tag, each side lowercase [0-9a-z_-] not starting or ending with "-", not "${tag}"`,
      'e.g. --tag game-server:v1-4-2',
    );
  }
  return tag;
}

export function validateDisplayName(name: string): string {
  if (!name) throw new UsageError('--name is empty');
  if (Buffer.byteLength(name) > 128) throw new UsageError('--name is longer than 128 bytes');
  if (name !== name.trim() || /\s\s/.test(name)) {
    throw new UsageError('--name must not start or end with spaces or hold two spaces in a row');
  }
  return name;
}

export function parse(args: string[], opts: Record<string, unknown>, ctx: Context): PushOptions {
  if (opts.tag === undefined) throw new UsageError('--tag is required', 'e.g. --tag game-server:v1');
  const tag = validateTag(String(opts.tag));
  const name = validateDisplayName(opts.name === undefined ? tag : String(opts.name));
  const kind = parseChoice('--kind', opts.kind ?? 'docker_image', BUILD_KINDS);
  const compression = parseChoice('--compression', opts.compression ?? 'none', BUILD_COMPRESSIONS);
  const concurrency = parseInteger('--concurrency', opts.concurrency ?? '8', { min: 1, max: 64 });
  const contentType = String(opts.contentType ?? 'application/x-tar');

  const file = path.resolve(ctx.cwd, args[0]!);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
    if (stat.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    fs.accessSync(file, fs.constants.R_OK);
  } catch (err) {
    throw new UsageError(`<file> ${args[0]}: ${describeFsError(err)}`);
  }
  if (!stat.isFile()) throw new UsageError(`<file> ${args[0]}: not a regular file`);
  if (stat.size === 0) throw new UsageError(`<file> ${args[0]}: the file is empty`);
  if (stat.size >= MAX_BUILD_BYTES) {
    throw new UsageError(`<file> ${args[0]}: ${stat.size} bytes is over the service's limit (below 8 GB)`);
  }
  return { file, size: stat.size, mtimeMs: stat.mtimeMs, tag, name, kind, compression, contentType, concurrency, stallMs: 60_000 };
}

export async function run(ctx: Context, o: PushOptions): Promise<void> {
  const started = performance.now();
  const api = await ctx.api();
  ctx.info(`Creating build ${o.tag}…`);
  const build = await createBuild(api, {
    display_name: o.name,
    image_tag: o.tag,
    image_file: { path: path.basename(o.file), content_type: o.contentType, content_length: o.size },
    kind: o.kind,
    compression: o.compression,
    multipart_upload: true,
  });
  const parts = partsFrom(build, o.size);
  ctx.info(`Uploading ${path.basename(o.file)} in ${parts.length} part${parts.length === 1 ? '' : 's'}…`);

  // Hash alongside the upload: the same bytes are read once more, from the page cache.
  const hashing = sha256File(o.file, ctx.signal);
  hashing.catch(() => {});
  await uploadParts({
    file: o.file,
    parts,
    contentType: o.contentType,
    concurrency: o.concurrency,
    dispatcher: api.dispatcher,
    retry: ctx.retry,
    stallMs: o.stallMs,
    signal: ctx.signal,
    events: {
      retry: (part, attempt, err, wait) =>
        ctx.info(`part ${part.number}: attempt ${attempt} failed (${err.message}); retrying in ${(wait / 1000).toFixed(1)} s`),
    },
  });
  const sha256 = await hashing;

  const now = fs.statSync(o.file);
  if (now.size !== o.size || now.mtimeMs !== o.mtimeMs) {
    throw new UploadError(`${o.file} changed during the upload; the build was not completed`, 'push it again once it is final');
  }
  await completeUpload(api, build.upload_id);

  const result: PushResult = {
    build_id: build.build_id,
    upload_id: build.upload_id,
    bytes: o.size,
    sha256,
    parts: parts.length,
    duration_ms: Math.round(performance.now() - started),
  };
  if (ctx.global.json) return writeJson(ctx, result);
  ctx.io.stdout.write(renderPushed(ctx, o.tag, result));
}
