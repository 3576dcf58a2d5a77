import path from 'node:path';
import type { Context } from '../../context.js';
import { BUILD_COMPRESSIONS, BUILD_KINDS, type BuildCompression, type BuildKind, type CreateBuildResponse } from '../../api/types.js';
import { emulatorDir, stateDir } from '../../config/paths.js';
import { InterruptedError, UploadError, UsageError, describeFsError } from '../../errors.js';
import type { PreparedInput } from '../../upload/input.js';
import type { Journal } from '../../upload/journal.js';
import type { Part } from '../../upload/plan.js';
import type { ProgressFlag } from '../../upload/progress.js';
import { bytesPerSecond, integer } from '../args.js';
import { defineCommand } from '../command.js';

/** The service refuses content_length of 8 GB or more (UPLOAD_TOO_LARGE). */
export const MAX_BUILD_BYTES = 8_000_000_000;
const TAG_PART = /^(?!-)[0-9a-z_-]+(?<!-)$/;
// Presigned URLs expire (SERVICE-FACTS): 6 h for parts, 1 h for a single PUT. Resume only well inside that.
const PART_URL_TTL_MS = 6 * 3_600_000;
const SINGLE_URL_TTL_MS = 3_600_000;
const EXPIRY_MARGIN_MS = 10 * 60_000;

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

function checkSize(source: string, size: number): void {
  if (size === 0) throw new UsageError(`<file> ${source}: the file is empty`);
  if (size >= MAX_BUILD_BYTES) {
    throw new UsageError(`<file> ${source}: ${size} bytes is over the service's limit (below 8 GB)`);
  }
}

export default defineCommand({
  operands: ['<file>'],
  summary: 'Upload a game server image (file, directory or - for stdin) and register it as a build',
  options: [
    { flags: '--tag <name:tag>', description: 'image tag, lowercase [0-9a-z_-] on each side of the colon (required)' },
    { flags: '--name <display name>', description: 'display name of the build (default: the tag)' },
    { flags: '--kind <kind>', description: 'image kind (default: detected for a directory, else docker_image)', choices: BUILD_KINDS },
    {
      flags: '--compression <compression>',
      description: 'lz4 compresses before upload (default: lz4 for a file that is already LZ4, else none)',
      choices: BUILD_COMPRESSIONS,
    },
    { flags: '--content-type <mime>', description: 'MIME type sent with the file', default: 'application/x-tar' },
    { flags: '--concurrency <n>', description: 'parts uploaded at once (1-64)', default: '8', value: integer({ min: 1, max: 64 }) },
    { flags: '--limit-rate <rate>', description: 'cap the upload at this many bytes per second, e.g. 20M', value: bytesPerSecond },
    { flags: '--stall-timeout <seconds>', description: 'a part with no bytes moving this long is retried', default: '60', value: integer({ min: 1 }) },
    { flags: '--no-resume', description: 'start a fresh upload even when an earlier one of this file can be resumed' },
    {
      flags: '--progress <mode>',
      description: 'progress on stderr: auto (a live line on a terminal, plain lines otherwise), plain, json, none',
      choices: ['auto', 'plain', 'json', 'none'] satisfies ProgressFlag[],
      default: 'auto',
    },
    { flags: '--dry-run', description: 'show kind, compression, size, SHA-256 and parts; send nothing' },
  ],
  examples: [
    'gamehost build push server.tar --tag game-server:v1-4-2',
    'gamehost build push ./bundle --tag game-server:v2 --compression lz4   # a directory, packed and compressed',
    'docker save game:v1 | gamehost build push - --tag game-server:${GITHUB_SHA::12} --progress json --json   # in CI',
  ],
  async parse(v, ctx): Promise<PushOptions> {
    if (v.tag === undefined) throw new UsageError('--tag is required', 'e.g. --tag game-server:v1');
    const tag = validateTag(v.tag);
    const name = validateDisplayName(v.name ?? tag);
    const source = v.file;
    if (source !== '-') {
      const { default: fs } = await import('node:fs');
      const file = path.resolve(ctx.cwd, source);
      let stat: import('node:fs').Stats;
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
      kind: v.kind,
      compression: v.compression,
      contentType: v.contentType,
      concurrency: v.concurrency,
      stallMs: v.stallTimeout * 1000,
      limitRate: v.limitRate,
      resume: v.resume,
      dryRun: v.dryRun,
      progress: v.progress,
    };
  },
  run,
});

async function run(ctx: Context, o: PushOptions): Promise<void> {
  const started = performance.now();
  const [{ prepareInput }, { appendBuildSummary }, { writeJson }, { renderPushed }] = await Promise.all([
    import('../../upload/input.js'),
    import('../../output/ci.js'),
    import('../../output/json.js'),
    import('../../output/views/build.js'),
  ]);
  const input = await prepareInput(ctx, o.source, { kind: o.kind, compression: o.compression });
  try {
    checkSize(o.source, input.size);
    if (o.dryRun) return await dryRun(ctx, input);
    const result = await push(ctx, o, input, started);
    appendBuildSummary(ctx, o.tag, result);
    if (ctx.global.json) return writeJson(ctx, result);
    ctx.io.stdout.write(renderPushed(ctx, o.tag, result));
  } finally {
    await input.cleanup();
  }
}

async function dryRun(ctx: Context, input: PreparedInput): Promise<void> {
  const [{ sha256File }, { expectedParts }, { writeJson }, { renderDryRun }] = await Promise.all([
    import('../../upload/hash.js'),
    import('../../upload/plan.js'),
    import('../../output/json.js'),
    import('../../output/views/build.js'),
  ]);
  const sha256 = await sha256File(input.file, ctx.signal);
  const plan = expectedParts(input.size);
  const result = { dry_run: true as const, kind: input.kind, compression: input.compression, bytes: input.size, sha256, parts: plan.length, part_size: plan[0]!.length };
  if (ctx.global.json) return writeJson(ctx, result);
  ctx.io.stdout.write(renderDryRun(ctx, result));
}

/** Where this upload's resume journal lives; none for a file we made ourselves (it differs every run). */
async function journalFor(ctx: Context, endpoint: string, embedded: boolean, game: string, o: PushOptions, input: PreparedInput): Promise<Journal | undefined> {
  if (input.temporary) return undefined;
  // The embedded emulator listens on a new port each run: key it by its data directory instead.
  const key = embedded ? `embedded:${emulatorDir(ctx.env)}` : endpoint;
  const { Journal } = await import('../../upload/journal.js');
  return new Journal(path.join(stateDir(ctx.env), 'uploads'), { endpoint: key, game, tag: o.tag, file: input.file, size: input.size, mtimeMs: input.mtimeMs });
}

async function push(ctx: Context, o: PushOptions, input: PreparedInput, started: number): Promise<PushResult> {
  const [{ default: fs }, { completeUpload, createBuild }, { formatTime }, { uploadParts }, { sha256File }, { partsFrom }, { UploadProgress, progressMode }, { RateLimiter }] =
    await Promise.all([
      import('node:fs'),
      import('../../api/operations.js'),
      import('../../output/format.js'),
      import('../../upload/engine.js'),
      import('../../upload/hash.js'),
      import('../../upload/plan.js'),
      import('../../upload/progress.js'),
      import('../../upload/ratelimit.js'),
    ]);
  const api = await ctx.api();
  const journal = await journalFor(ctx, api.target.endpoint, api.target.embedded, api.gameId(), o, input);
  let previous = journal?.read();
  if (previous && !o.resume) {
    journal!.remove();
    ctx.info('Starting a fresh upload (--no-resume); the earlier one is abandoned.');
    previous = undefined;
  }
  if (previous) {
    const ttl = partsFrom(previous.build, input.size).length > 1 ? PART_URL_TTL_MS : SINGLE_URL_TTL_MS;
    if (ctx.now() - previous.createdAt > ttl - EXPIRY_MARGIN_MS) {
      const when = formatTime(previous.createdAt, { local: ctx.io.stderr.isTTY === true });
      ctx.info(`Starting over: the upload begun at ${when} has upload URLs that expire (or have expired).`);
      journal!.remove();
      previous = undefined;
    }
  }

  let build: CreateBuildResponse;
  let done: Set<number>;
  if (previous) {
    build = previous.build;
    done = previous.done;
  } else {
    ctx.info(`Creating build ${o.tag}…`);
    build = await createBuild(api, {
      display_name: o.name,
      image_tag: o.tag,
      image_file: { path: path.basename(input.source === '-' ? 'stdin.tar' : input.file), content_type: o.contentType, content_length: input.size },
      kind: input.kind,
      compression: input.compression,
      multipart_upload: true,
    });
    journal?.start(build, ctx.now());
    done = new Set();
  }

  let parts = partsFrom(build, input.size);
  if (previous && api.target.embedded) parts = parts.map((p) => ({ ...p, url: rebase(p.url, api.target.endpoint) }));
  const todo = parts.filter((p) => !done.has(p.number));
  const doneBytes = parts.filter((p) => done.has(p.number)).reduce((sum, p) => sum + p.length, 0);
  if (previous) ctx.info(`Resuming build ${build.build_id}: ${done.size} of ${parts.length} parts are already up.`);

  const progress = new UploadProgress(ctx, progressMode(ctx, o.progress), input.size, parts.length, doneBytes, done.size);
  await progress.start(input.source);
  // Hash alongside the upload: the same bytes are read once more, from the page cache.
  const hashing = sha256File(input.file, ctx.signal);
  hashing.catch(() => {});
  try {
    await uploadParts({
      file: input.file,
      parts: todo,
      contentType: o.contentType,
      concurrency: o.concurrency,
      dispatcher: api.dispatcher,
      retry: ctx.retry,
      stallMs: o.stallMs,
      limiter: o.limitRate ? new RateLimiter(o.limitRate) : undefined,
      signal: ctx.signal,
      events: {
        progress: (n) => progress.add(n),
        partDone: (part: Part) => {
          done.add(part.number);
          journal?.partDone(part.number);
          progress.partDone(part);
        },
        retry: (part, attempt, err, wait) => progress.retry(part, attempt, err, wait),
      },
    });
  } catch (err) {
    progress.stop();
    const resume = journal
      ? `run the same command again to resume: ${done.size} of ${parts.length} parts are up`
      : 'run the same command again to start over';
    if (err instanceof InterruptedError || err instanceof UploadError) err.hint = resume;
    throw err;
  }
  const sha256 = await hashing;

  const now = fs.statSync(input.file);
  if (now.size !== input.size || now.mtimeMs !== input.mtimeMs) {
    progress.stop();
    journal?.remove();
    throw new UploadError(`${input.source} changed during the upload; the build was not completed`, 'push it again once the file is final');
  }
  await completeUpload(api, build.upload_id);
  journal?.remove();

  const result: PushResult = {
    build_id: build.build_id,
    upload_id: build.upload_id,
    bytes: input.size,
    sha256,
    parts: parts.length,
    duration_ms: Math.round(performance.now() - started),
  };
  progress.stop({ ...result });
  return result;
}

/** The same presigned path on another origin (the embedded emulator's port of this run). */
function rebase(url: string, endpoint: string): string {
  const u = new URL(url);
  const e = new URL(endpoint);
  u.protocol = e.protocol;
  u.host = e.host;
  return u.toString();
}
