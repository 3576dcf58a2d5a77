// build push: parses and checks the options, prepares the input, hands it to the upload session
// (src/upload/session.ts) and renders what it returns.
import path from 'node:path';
import type { Context } from '../../context.js';
import { BUILD_COMPRESSIONS, BUILD_KINDS, type BuildCompression, type BuildKind } from '../../api/types.js';
import { UsageError, describeFsError } from '../../errors.js';
import type { FileHash } from '../../upload/hash.js';
import type { PreparedInput } from '../../upload/input.js';
import type { ProgressFlag } from '../../upload/progress.js';
import { bytesPerSecond, integer } from '../args.js';
import { defineCommand } from '../command.js';

/** The service refuses content_length of 8 GB or more (UPLOAD_TOO_LARGE). */
export const MAX_BUILD_BYTES = 8_000_000_000;
const TAG_PART = /^(?!-)[0-9a-z_-]+(?<!-)$/;

export interface PushOptions {
  /** What the user named: a path (file or directory), '-' for stdin, or with `image` a local Docker image. */
  source: string;
  /** `source` is an image of the local Docker daemon (--image), exported as a docker_image build. */
  image: boolean;
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

/** An image tag as builds keep it; `flag` names where it came from (`--run-build` takes one too). */
export function validateTag(tag: string, flag = '--tag'): string {
  const sides = tag.split(':');
  if (sides.length !== 2 || !sides.every((s) => TAG_PART.test(s))) {
    throw new UsageError(
      `${flag} must be name:tag, each side lowercase [0-9a-z_-] not starting or ending with "-", not "${tag}"`,
      `e.g. ${flag} game-server:v1-4-2`,
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

/**
 * The tag a build pushed with --image gets when --tag is absent: the image's name (its last path segment) and tag,
 * lowercased, with anything but [0-9a-z_-] turned into "-" (`ghcr.io/studio/Game.Server:v1.4.2` →
 * `game-server:v1-4-2`; no tag is `latest`). Undefined for an image ID, or a name with nothing left.
 */
export function tagFromImage(image: string): string | undefined {
  if (/^(sha256:)?[0-9a-f]{12,64}$/.test(image)) return undefined;
  const ref = image.split('@')[0]!;
  const slash = ref.lastIndexOf('/');
  const colon = ref.lastIndexOf(':');
  const [repo, tag] = colon > slash ? [ref.slice(0, colon), ref.slice(colon + 1)] : [ref, 'latest'];
  const clean = (s: string) => s.toLowerCase().replace(/[^0-9a-z_-]+/g, '-').replace(/^-+|-+$/g, '');
  const derived = `${clean(repo.slice(repo.lastIndexOf('/') + 1))}:${clean(tag)}`;
  return TAG_PART.test(derived.split(':')[0]!) && TAG_PART.test(derived.split(':')[1]!) ? derived : undefined;
}

/** Sizes in the CLI's units (powers of 1024), with the exact bytes: 7.45 GiB rounds both sides of the limit. */
async function checkSize(source: string, size: number): Promise<void> {
  if (size === 0) throw new UsageError(`${source}: the file is empty`);
  if (size >= MAX_BUILD_BYTES) {
    const { formatBytes, formatCount } = await import('../../output/format.js');
    const exact = (n: number) => `${formatBytes(n)} (${formatCount(n)} bytes)`;
    throw new UsageError(`${source}: ${exact(size)} is over the service's limit: a build must be below ${exact(MAX_BUILD_BYTES)}`);
  }
}

export default defineCommand({
  writes: true,
  operands: ['[file]'],
  summary: 'Upload a game server image (file, directory, -, or --image) and register it as a build',
  options: [
    { flags: '--image <name:tag|id>', description: 'push this image of the local Docker daemon (instead of a file)' },
    { flags: '--tag <name:tag>', description: 'image tag, lowercase [0-9a-z_-] on each side of the colon (required; with --image, default: from its name)' },
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
  notes: 'A directory is packed into a tar; - reads standard input; --image exports an image of the local Docker daemon (no docker save step). With -q, prints the build id alone.',
  examples: [
    'gamehost build push server.tar --tag game-server:v1-4-2',
    'gamehost build push --image game-server:v2   # from the local Docker daemon, tagged game-server:v2',
    'docker save game:v1 | gamehost build push - --tag game-server:${GITHUB_SHA::12} --progress json --json   # in CI',
  ],
  async parse(v, ctx): Promise<PushOptions> {
    if (v.file !== undefined && v.image !== undefined) throw new UsageError(`give a file or --image, not both (${v.file} and --image ${v.image})`);
    if (v.file === undefined && v.image === undefined) throw new UsageError('nothing to push: give a file, a directory, - for stdin, or --image <name:tag>');
    if (v.image !== undefined && v.kind !== undefined && v.kind !== 'docker_image') throw new UsageError(`--image exports a docker_image; it cannot be pushed as --kind ${v.kind}`);
    if (v.image === '') throw new UsageError('--image is empty');
    let tagGiven = v.tag;
    if (tagGiven === undefined && v.image !== undefined) {
      tagGiven = tagFromImage(v.image);
      if (tagGiven === undefined) throw new UsageError(`--tag is required: no tag can be made from the image '${v.image}'`, 'e.g. --tag game-server:v1');
    }
    if (tagGiven === undefined) throw new UsageError('--tag is required', 'e.g. --tag game-server:v1');
    const tag = validateTag(tagGiven);
    const name = validateDisplayName(v.name ?? tag);
    const source = v.image ?? v.file!;
    if (v.image === undefined && source !== '-') {
      const { default: fs } = await import('node:fs');
      const file = path.resolve(ctx.cwd, source);
      let stat: import('node:fs').Stats;
      try {
        stat = fs.statSync(file);
        if (!stat.isDirectory()) fs.accessSync(file, fs.constants.R_OK);
      } catch (err) {
        throw new UsageError(`${source}: ${describeFsError(err)}`);
      }
      if (stat.isFile()) await checkSize(source, stat.size);
      else if (!stat.isDirectory()) throw new UsageError(`${source}: not a regular file or directory`);
    }
    return {
      source,
      image: v.image !== undefined,
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
  // A file given by its path is hashed from the start: the worker boots (60-80 ms) while the rest of the push
  // loads, rather than after it. It is used when the bytes sent are that file's (not packed, compressed or changed
  // since); otherwise it is stopped once the input is ready.
  const { hashFile } = await import('../../upload/hash.js');
  const early = o.image || o.source === '-' ? undefined : hashFile(path.resolve(ctx.cwd, o.source), ctx.signal);
  early?.digest.catch(() => {});
  try {
    await push(ctx, o, started, early);
  } finally {
    early?.stop();
    await early?.digest.catch(() => {});
  }
}

async function push(ctx: Context, o: PushOptions, started: number, early: FileHash | undefined): Promise<void> {
  const [{ sameBytes }, { prepareInput }, { progressMode }, { pushSession }, { appendBuildSummary, writeStepOutputs }, { writeJson }, { renderPushed }] = await Promise.all([
    import('../../upload/hash.js'),
    import('../../upload/input.js'),
    import('../../upload/progress.js'),
    import('../../upload/session.js'),
    import('../../output/ci.js'),
    import('../../output/json.js'),
    import('../../output/views/push.js'),
  ]);
  const progress = progressMode(ctx, o.progress);
  // Every stderr line is one JSON object from here on, the notices of packing and of the emulator included.
  if (progress === 'json') ctx.notices = 'json';
  // Where it goes is settled before a byte of stdin is read (in CI, no endpoint is refused).
  if (!o.dryRun) await ctx.target();
  const input = await prepareInput(ctx, o.source, { kind: o.kind, compression: o.compression, dockerImage: o.image });
  const hash = early !== undefined && sameBytes(early, input) ? early : undefined;
  if (hash === undefined) early?.stop();
  try {
    await checkSize(o.source, input.size);
    if (o.dryRun) return await dryRun(ctx, input, hash);
    const api = await ctx.api();
    const result = await pushSession(ctx, api, { ...o, progress, kind: input.kind, compression: input.compression }, input, started, hash);
    appendBuildSummary(ctx, o.tag, result);
    writeStepOutputs(ctx, { build_id: result.build_id, upload_id: result.upload_id, sha256: result.sha256, bytes: String(result.bytes) });
    if (ctx.global.json) return writeJson(ctx, result);
    ctx.io.stdout.write(renderPushed(ctx, o.tag, result));
  } finally {
    await input.cleanup();
  }
}

async function dryRun(ctx: Context, input: PreparedInput, hash: FileHash | undefined): Promise<void> {
  const [{ hashFile }, { expectedParts }, { writeJson }, { renderDryRun }] = await Promise.all([
    import('../../upload/hash.js'),
    import('../../upload/plan.js'),
    import('../../output/json.js'),
    import('../../output/views/push.js'),
  ]);
  const sha256 = await (hash ?? hashFile(input.file, ctx.signal)).digest;
  const plan = expectedParts(input.size);
  const result = { dry_run: true as const, kind: input.kind, compression: input.compression, bytes: input.size, sha256, parts: plan.length, part_size: plan[0]!.length };
  if (ctx.global.json) return writeJson(ctx, result);
  ctx.io.stdout.write(renderDryRun(ctx, result));
}
