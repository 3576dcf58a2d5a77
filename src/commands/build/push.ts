// build push: parses and checks the options, prepares the input, hands it to the upload session
// (src/upload/session.ts) and renders what it returns.
import fs from 'node:fs';
import path from 'node:path';
import type { Context } from '../../context.js';
import { BUILD_COMPRESSIONS, BUILD_KINDS, type BuildCompression, type BuildKind } from '../../api/types.js';
import { UsageError } from '../../errors.js';
import { writeJson } from '../../output/json.js';
import { renderDryRun, renderPushed } from '../../output/views/build.js';
import { appendBuildSummary, writeStepOutputs } from '../../output/ci.js';
import { sha256File } from '../../upload/hash.js';
import { prepareInput, type PreparedInput } from '../../upload/input.js';
import { expectedParts } from '../../upload/plan.js';
import { PROGRESS_FLAGS, progressMode, type ProgressFlag } from '../../upload/progress.js';
import { parseRate } from '../../upload/ratelimit.js';
import { pushSession } from '../../upload/session.js';
import { describeFsError, parseChoice, parseInteger } from '../args.js';

/** The service refuses content_length of 8 GB or more (UPLOAD_TOO_LARGE). */
export const MAX_BUILD_BYTES = 8_000_000_000;
const TAG_PART = /^(?!-)[0-9a-z_-]+(?<!-)$/;

export interface PushOptions {
  /** What the user named: a path (file or directory) or '-' for stdin. */
  source: string;
  tag: string;
  name: string;
  kind?: BuildKind;
  compression?: BuildCompression;
  contentType: string;
  concurrency: number;
  stallMs: number;
  limitRate?: number;
  resume: boolean;
  dryRun: boolean;
  progress: ProgressFlag;
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

function checkSize(source: string, size: number): void {
  if (size === 0) throw new UsageError(`<file> ${source}: the file is empty`);
  if (size >= MAX_BUILD_BYTES) {
    throw new UsageError(`<file> ${source}: ${size} bytes is over the service's limit (below 8 GB)`);
  }
}

export function parse(args: string[], opts: Record<string, unknown>, ctx: Context): PushOptions {
  if (opts.tag === undefined) throw new UsageError('--tag is required', 'e.g. --tag game-server:v1');
  const tag = validateTag(String(opts.tag));
  const name = validateDisplayName(opts.name === undefined ? tag : String(opts.name));
  const kind = opts.kind === undefined ? undefined : parseChoice('--kind', opts.kind, BUILD_KINDS);
  const compression = opts.compression === undefined ? undefined : parseChoice('--compression', opts.compression, BUILD_COMPRESSIONS);
  const concurrency = parseInteger('--concurrency', opts.concurrency ?? '8', { min: 1, max: 64 });
  const stallSeconds = parseInteger('--stall-timeout', opts.stallTimeout ?? '60', { min: 1 });
  let limitRate: number | undefined;
  if (opts.limitRate !== undefined) {
    limitRate = parseRate(String(opts.limitRate));
    if (limitRate === undefined) throw new UsageError(`--limit-rate must be bytes per second such as 20M or 500K, not "${opts.limitRate}"`);
  }
  const progress = parseChoice('--progress', opts.progress ?? 'auto', PROGRESS_FLAGS);

  const source = args[0]!;
  if (source !== '-') {
    const file = path.resolve(ctx.cwd, source);
    let stat: fs.Stats;
    try {
      stat = fs.statSync(file);
      if (!stat.isDirectory()) fs.accessSync(file, fs.constants.R_OK);
    } catch (err) {
      throw new UsageError(`<file> ${source}: ${describeFsError(err)}`);
    }
    if (stat.isFile()) checkSize(source, stat.size);
    else if (!stat.isDirectory()) throw new UsageError(`<file> ${source}: not a regular file or directory`);
  }
  return {
    source,
    tag,
    name,
    kind,
    compression,
    contentType: String(opts.contentType ?? 'application/x-tar'),
    concurrency,
    stallMs: stallSeconds * 1000,
    limitRate,
    resume: opts.resume !== false,
    dryRun: opts.dryRun === true,
    progress,
  };
}

export async function run(ctx: Context, o: PushOptions): Promise<void> {
  const started = performance.now();
  const input = await prepareInput(ctx, o.source, { kind: o.kind, compression: o.compression });
  try {
    checkSize(o.source, input.size);
    if (o.dryRun) return await dryRun(ctx, input);
    const api = await ctx.api();
    const result = await pushSession(ctx, api, { ...o, progress: progressMode(ctx, o.progress), kind: input.kind, compression: input.compression }, input, started);
    appendBuildSummary(ctx, o.tag, result);
    writeStepOutputs(ctx, { build_id: result.build_id, upload_id: result.upload_id, sha256: result.sha256 });
    if (ctx.global.json) return writeJson(ctx, result);
    ctx.io.stdout.write(renderPushed(ctx, o.tag, result));
  } finally {
    await input.cleanup();
  }
}

async function dryRun(ctx: Context, input: PreparedInput): Promise<void> {
  const sha256 = await sha256File(input.file, ctx.signal);
  const plan = expectedParts(input.size);
  const result = { dry_run: true as const, kind: input.kind, compression: input.compression, bytes: input.size, sha256, parts: plan.length, part_size: plan[0]!.length };
  if (ctx.global.json) return writeJson(ctx, result);
  ctx.io.stdout.write(renderDryRun(ctx, result));
}

