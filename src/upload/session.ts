// One upload session: everything `build push` does once its input is ready, owned by a single try/finally. It
// checks the service's plan before journalling it, sends the parts, hashes the file, completes the upload, and
// shows each phase. On every path the display, timers, the hash worker and requests in flight stop; the resume
// journal is kept only when running the same command again can finish the upload.
import fs from 'node:fs';
import path from 'node:path';
import type { ApiClient } from '../api/client.js';
import { completeUpload, createBuild, isCompleteInProgress } from '../api/operations.js';
import { sleep } from '../shared/retry.js';
import { isRetryable } from '../api/transport.js';
import type { BuildCompression, BuildKind, CreateBuildResponse } from '../api/types.js';
import { emulatorDir, stateDir } from '../config/paths.js';
import type { BaseContext } from '../base-context.js';
import { ApiError, CliError, InterruptedError, NetworkError, UploadError } from '../errors.js';
import { formatDuration, formatTime } from '../output/format.js';
import { uploadParts } from './engine.js';
import { hashFile, type FileHash } from './hash.js';
import type { PreparedInput } from './input.js';
import { Journal } from './journal.js';
import { partsFrom, type Part } from './plan.js';
import { TransferProgress, type ProgressMode } from './progress.js';
import { RateLimiter } from './ratelimit.js';

// Presigned URLs expire (SERVICE-FACTS): 6 h for parts, 1 h for a single PUT. Resume only well inside that.
const PART_URL_TTL_MS = 6 * 3_600_000;
const SINGLE_URL_TTL_MS = 3_600_000;
const EXPIRY_MARGIN_MS = 10 * 60_000;

export interface SessionOptions {
  tag: string;
  name: string;
  contentType: string;
  concurrency: number;
  stallMs: number;
  limitRate?: number;
  resume: boolean;
  progress: ProgressMode;
  /** Given by the build's input: what the service stores it as. */
  kind: BuildKind;
  compression: BuildCompression;
}

/** What a finished push reports (the command renders it; `--json` prints it). */
export interface PushResult {
  build_id: string;
  upload_id: string;
  bytes: number;
  /** Bytes this run sent: less than `bytes` after a resume. */
  bytes_sent: number;
  sha256: string;
  parts: number;
  duration_ms: number;
}

/**
 * Pushes `input` as a new build (or resumes its push). `given` is a hash of the input's bytes already under way
 * (build push starts one as it starts); without it the session starts its own. Either is stopped when it fails.
 */
export async function pushSession(ctx: BaseContext, api: ApiClient, o: SessionOptions, input: PreparedInput, started: number, given?: FileHash): Promise<PushResult> {
  const progress = new TransferProgress(ctx, o.progress);
  // Stops what the session started (the hash, parts in flight) on failure, and when Ctrl-C aborts ctx.signal.
  const session = new AbortController();
  const journal = journalFor(ctx, api, o, input);
  let parts: Part[] = [];
  const done = new Set<number>();
  let hash: FileHash | undefined;
  // Set once the service holds a build for this upload (created now, or by the run being resumed).
  let build: CreateBuildResponse | undefined;
  const state = () => ({ journal, doneParts: done.size, totalParts: parts.length, tag: o.tag, created: build !== undefined });
  // The hint is on the interruption the moment it happens: a second signal, which skips the clean-up, prints it
  // as it stands (src/cli.ts), so the way to resume is the last line in every window.
  const onAbort = () => {
    if (ctx.signal.reason instanceof CliError) explain(ctx.signal.reason, state());
    session.abort(ctx.signal.reason);
  };
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  const priorRetry = api.onRetry;
  api.onRetry = (notice, spec) => progress.apiRetry(notice, `${spec.method} ${spec.path}`);
  try {
    // Hashed alongside the upload on a worker (the same bytes once more, from the page cache); stopped on failure.
    // Started first, and ready before the first request (see FileHash.ready).
    hash = given ?? hashFile(input.file, session.signal);
    hash.digest.catch(() => {});
    await Promise.all([progress.open(), hash.ready]);
    const resumed = resumable(ctx, journal, o, input, progress, done);
    if (!resumed) {
      progress.creating(o.tag);
      build = await createBuild(api, {
        display_name: o.name,
        image_tag: o.tag,
        image_file: { path: path.basename(input.source === '-' ? 'stdin.tar' : input.file), content_type: o.contentType, content_length: input.size },
        kind: o.kind,
        compression: o.compression,
        multipart_upload: true,
      }).catch((err) => {
        if (err instanceof ApiError && err.code === 'BUILD_TAG_TAKEN') {
          err.hint = `tags are unique per game, and an unfinished push holds its tag too: push with a new one (--tag ${newTag(o.tag)})`;
        }
        throw err;
      });
      // Checked before anything is journalled: a plan that cannot work is never replayed.
      parts = partsFrom(build, input.size);
      journal?.start(build, ctx.now());
    } else {
      ({ build, parts } = resumed);
      if (api.target.embedded) parts = parts.map((p) => ({ ...p, url: rebase(p.url, api.target.endpoint) }));
      progress.notice(`Resuming build ${build.build_id}: ${done.size} of ${parts.length} parts are already up.`, {
        type: 'resume',
        build_id: build.build_id,
        done_parts: done.size,
        parts: parts.length,
      });
    }

    const todo = parts.filter((p) => !done.has(p.number));
    const resumedBytes = parts.filter((p) => done.has(p.number)).reduce((sum, p) => sum + p.length, 0);
    progress.start({ file: input.source, total: input.size, parts: parts.length, resumedBytes, resumedParts: done.size });
    let sent = 0;
    await uploadParts({
      file: input.file,
      parts: todo,
      totalParts: parts.length,
      contentType: o.contentType,
      concurrency: o.concurrency,
      retry: ctx.retry,
      stallMs: o.stallMs,
      limiter: o.limitRate ? new RateLimiter(o.limitRate) : undefined,
      dispatcher: (url) => api.dispatcher(url),
      signal: session.signal,
      events: {
        progress: (n) => {
          sent += n;
          progress.add(n);
        },
        partDone: (part) => {
          done.add(part.number);
          journal?.partDone(part.number);
          progress.partDone(part);
        },
        retry: (part, attempt, err, wait) => progress.retry(part, attempt, err, wait),
      },
    });
    progress.completing();
    const sha256 = await hash.digest;

    const now = fs.statSync(input.file);
    if (now.size !== input.size || now.mtimeMs !== input.mtimeMs) {
      throw new UploadError(`${input.source} changed during the upload; the build was not completed`, 'push it again once the file is final');
    }
    await completeWhenFree(ctx, api, build.upload_id, progress);
    journal?.remove();

    const result: PushResult = {
      build_id: build.build_id,
      upload_id: build.upload_id,
      bytes: input.size,
      bytes_sent: sent,
      sha256,
      parts: parts.length,
      duration_ms: Math.round(performance.now() - started),
    };
    progress.done({ ...result });
    return result;
  } catch (caught) {
    const err = ctx.signal.aborted ? ctx.signal.reason : caught;
    if (err instanceof CliError) explain(err, state());
    else journal?.remove();
    progress.fail(err);
    throw err;
  } finally {
    session.abort();
    // The hash worker is stopped (a finished one is gone already); its thread is gone before the session returns.
    hash?.stop();
    await hash?.digest.catch(() => {});
    ctx.signal.removeEventListener('abort', onAbort);
    api.onRetry = priorRetry;
    progress.stop();
  }
}

// Waiting for another completion of the same upload (an interrupted run's): asked again as the service says, at
// most this long in all.
const COMPLETE_WAIT_MS = 10 * 60_000;
const COMPLETE_POLL_MIN_MS = 500;
const COMPLETE_POLL_MAX_MS = 10_000;

/** Completes the upload; while another completion of it is in progress, says so once and waits for it. */
async function completeWhenFree(ctx: BaseContext, api: ApiClient, uploadId: string, progress: TransferProgress): Promise<void> {
  const started = ctx.now();
  for (let told = false; ; told = true) {
    try {
      return await completeUpload(api, uploadId);
    } catch (err) {
      if (!isCompleteInProgress(err)) throw err;
      if (ctx.now() - started > COMPLETE_WAIT_MS) {
        err.message = `another completion of this upload was still in progress after ${formatDuration(ctx.now() - started)}`;
        throw err;
      }
      if (!told) progress.notice('another completion of this upload is in progress; waiting', { type: 'waiting', reason: 'complete_in_progress', message: 'another completion of this upload is in progress; waiting' });
      await sleep(Math.min(COMPLETE_POLL_MAX_MS, Math.max(COMPLETE_POLL_MIN_MS, err.retryAfterMs ?? 1000)), ctx.signal);
    }
  }
}

/**
 * Keeps the journal and says "run the same command again to resume" only where that is true: a network error,
 * a 5xx (or 408/429) after its retries, Ctrl-C, SIGTERM. Anything else (a presigned URL refused with 403 or 404,
 * a plan the client refused, a 4xx from complete, a changed file) removes the journal: the next run starts over,
 * with a new build, and the tag (once the service may hold a build for this upload: `created`, or a create
 * request cut short) may still be held by the unfinished one, which the hint says.
 */
function explain(err: CliError, at: { journal?: Journal; doneParts: number; totalParts: number; tag: string; created: boolean }): void {
  const { journal, tag } = at;
  const cause = err instanceof UploadError && err.cause ? err.cause : err;
  const canResume = err instanceof InterruptedError || cause instanceof NetworkError || (cause instanceof ApiError && isRetryable(cause, true));
  if (canResume && journal?.exists()) {
    err.hint = `run the same command again to resume: ${at.doneParts} of ${at.totalParts} parts are up`;
    return;
  }
  journal?.remove();
  if (!at.created) {
    // Interrupted while the build was being created: the service may have made it (and hold the tag) or not.
    if (err instanceof InterruptedError) err.hint = `run the same command again to start over (should it say ${tag} is taken, the interrupted push holds it: use --tag ${newTag(tag)})`;
    return;
  }
  // The service's own hint (check the token) stays; ours gain what the next push needs to know.
  if (err.hint && cause instanceof ApiError) return;
  if (canResume) {
    // Resumable, but this input was made for this run (stdin, a directory, an LZ4 copy): nothing was kept.
    if (err instanceof InterruptedError || err instanceof UploadError) err.hint = `push the build again to start over; ${heldTag(tag)}`;
    return;
  }
  err.hint = `${err.hint ?? 'this upload cannot be resumed: push the build again'}; ${heldTag(tag)}`;
}

function heldTag(tag: string): string {
  return `the unfinished build may still hold ${tag}, so the next push may need a new tag (--tag ${newTag(tag)})`;
}

/** `base:<new-tag>` for `base:tag`: the form a new tag takes, for hints. */
function newTag(tag: string): string {
  return `${tag.split(':')[0]}:<new-tag>`;
}

/** The earlier run's build and its checked plan when it can still be finished, with its finished parts in `done`; else undefined. */
function resumable(
  ctx: BaseContext,
  journal: Journal | undefined,
  o: SessionOptions,
  input: PreparedInput,
  progress: TransferProgress,
  done: Set<number>,
): { build: CreateBuildResponse; parts: Part[] } | undefined {
  const previous = journal?.read();
  if (!journal || !previous) return undefined;
  const startOver = (why: string) => {
    journal.remove();
    progress.notice(`Starting over: ${why}.`);
    return undefined;
  };
  if (!o.resume) {
    journal.remove();
    progress.notice('Starting a fresh upload (--no-resume); the earlier one is abandoned.');
    return undefined;
  }
  let parts: Part[];
  try {
    parts = partsFrom(previous.build, input.size);
  } catch (err) {
    return startOver(`the saved upload plan is unusable (${(err as Error).message})`);
  }
  const ttl = parts.length > 1 ? PART_URL_TTL_MS : SINGLE_URL_TTL_MS;
  if (ctx.now() - previous.createdAt > ttl - EXPIRY_MARGIN_MS) {
    const when = formatTime(previous.createdAt, { local: ctx.io.stderr.isTTY === true });
    return startOver(`the upload begun at ${when} has upload URLs that expire (or have expired)`);
  }
  for (const n of previous.done) done.add(n);
  return { build: previous.build, parts };
}

/** Where this upload's resume journal lives; none for a file we made ourselves (it differs every run). */
function journalFor(ctx: BaseContext, api: ApiClient, o: SessionOptions, input: PreparedInput): Journal | undefined {
  if (input.temporary) return undefined;
  // The embedded emulator listens on a new port each run: key it by its data directory instead.
  const key = api.target.embedded ? `embedded:${emulatorDir(ctx.env)}` : api.target.endpoint;
  return new Journal(path.join(stateDir(ctx.env), 'uploads'), { endpoint: key, game: api.gameId(), tag: o.tag, file: input.file, size: input.size, mtimeMs: input.mtimeMs });
}

/** The same presigned path on another origin (the embedded emulator's port of this run). */
function rebase(url: string, endpoint: string): string {
  const u = new URL(url);
  const e = new URL(endpoint);
  u.protocol = e.protocol;
  u.host = e.host;
  return u.toString();
}
