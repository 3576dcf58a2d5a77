import path from 'node:path';
import type { Context } from '../../context.js';
import type { ApiClient } from '../../api/client.js';
import type { Answer } from '../../api/operations.js';
import type { LobbyLogsResponse, LogStream } from '../../api/types.js';
import { getGame, getLobbyLogs } from '../../api/operations.js';
import { UsageError, type NetworkError } from '../../errors.js';
import type { LobbyViewOptions, RegionNames } from '../../output/views/lobby.js';
import type { LogEntry } from '../../output/views/log-lines.js';
import { integer, milliseconds, parseLobbyId } from '../args.js';
import { defineCommand } from '../command.js';

export const DEFAULT_INTERVAL_MS = 2000;
/**
 * The least time between two watches of one stream. The service never answers a watch sooner than 1 s; this keeps a
 * service that does (or that answers the same lines again and again) from making a tight loop.
 */
export const WATCH_FLOOR_MS = 500;

export const STREAM_CHOICES = ['stdout', 'stderr', 'all'] as const;
type StreamChoice = (typeof STREAM_CHOICES)[number];
const STREAMS: Record<StreamChoice, LogStream[]> = { stdout: ['std_out'], stderr: ['std_err'], all: ['std_out', 'std_err'] };

export interface LogsOptions {
  lobbyId: string;
  /** Re-poll the summary until the lobby stops. */
  watch: boolean;
  /** Stream new lines until the lobby stops. */
  follow: boolean;
  /** Between two polls of the summary (--watch, and --follow's look at whether the lobby stopped). */
  intervalMs: number;
  /** Line charts with axes instead of sparklines. */
  chart: boolean;
  utc: boolean;
  streams: LogStream[];
  /** At most this many lines (the last ones) of what the service keeps at hand; undefined: all of them. */
  lines?: number;
  /** Only lines from this moment on (ms since the epoch). */
  since?: number;
  /** Each line after its time when piped (always on a terminal). */
  timestamps: boolean;
  /** Save the whole stream through the service's export: a file path (resolved), or '-' for stdout. */
  export?: string;
}

export default defineCommand({
  operands: ['<lobby-id>'],
  summary: "Show a lobby's status, metrics and log lines",
  options: [
    { flags: '--stream <stream>', description: 'the lines of stdout, stderr or both (default: all; stdout with --export)', choices: STREAM_CHOICES },
    { flags: '-n, --lines <count>', description: 'only the last <count> lines (default: all the service keeps at hand, 256 per stream)', value: integer({ min: 0 }) },
    { flags: '--since <time>', description: 'only lines from this time on: a duration ago (10m, 2h) or a time (RFC 3339, epoch ms)' },
    { flags: '-f, --follow', description: 'print new lines as they come until the lobby stops, then its exit code; exit 0 once it stopped' },
    { flags: '--timestamps', description: 'each line after its time when piped (always on a terminal)' },
    { flags: '--export [file]', description: 'save the whole stream to a file (default: lobby-<id>-stdout.txt), or - for stdout' },
    { flags: '--watch', description: 'redraw the status until the lobby stops; exit 0 if it stopped cleanly, 1 if it failed' },
    { flags: '--interval <seconds>', description: 'seconds between looks at the status with --watch or --follow (default: 2)', value: milliseconds },
    { flags: '--chart', description: 'draw CPU and memory as line charts with axes' },
    { flags: '--utc', description: 'show times in UTC instead of the local zone' },
  ],
  notes:
    '--watch redraws the status and prints no lines; --follow prints the status once, then the lines as they come; both end when the lobby stops. ' +
    'With -q, only the lines. --export saves every line the service kept of one stream, as it was printed.',
  examples: [
    'gamehost lobby logs "$LOBBY" --stream stderr -n 20 --since 10m --follow',
    'gamehost lobby logs "$LOBBY" -q --follow --timestamps > server.log   # in CI: its lines until it stops',
    'gamehost lobby logs "$LOBBY" -q --watch || echo "lobby failed"   # in CI, then: exit 1 if it failed',
  ],
  async parse(v, ctx): Promise<LogsOptions> {
    const lobbyId = parseLobbyId(v.lobbyId);
    if (v.watch && v.follow) throw new UsageError('--watch redraws the status and --follow prints the lines: give one of them');
    if (v.interval !== undefined && !v.watch && !v.follow) throw new UsageError('--interval goes with --watch or --follow');
    if (v.chart && ctx.global.json) throw new UsageError('--chart draws for people; --json already carries every sample');
    if (v.timestamps && ctx.global.json) throw new UsageError('--json already carries each line\'s timestamp: drop --timestamps');
    const since = v.since === undefined ? undefined : await parseSince(v.since, ctx.now());
    const base = { lobbyId, watch: v.watch, follow: v.follow, intervalMs: v.interval ?? DEFAULT_INTERVAL_MS, chart: v.chart, utc: v.utc, lines: v.lines, since, timestamps: v.timestamps };
    if (v.export === undefined) return { ...base, streams: STREAMS[v.stream ?? 'all'] };
    // The export is the whole stream as a file: nothing to pick lines from, nothing to follow or draw.
    const others = { '--follow': v.follow, '--watch': v.watch, '--lines': v.lines !== undefined, '--since': v.since !== undefined, '--timestamps': v.timestamps, '--chart': v.chart };
    const other = Object.entries(others).find(([, given]) => given)?.[0];
    if (other) throw new UsageError(`--export saves the whole stream: drop ${other}`);
    if (v.stream === 'all') throw new UsageError('--export saves one stream: --stream stdout or --stream stderr');
    const stream = v.stream ?? 'stdout';
    const given = v.export === true ? `lobby-${lobbyId}-${stream}.txt` : v.export;
    if (given === '') throw new UsageError('--export names an empty file');
    if (given === '-' && ctx.global.json) throw new UsageError('--json prints a summary on stdout: give --export <file>, not -');
    return { ...base, streams: STREAMS[stream], export: given === '-' ? '-' : path.resolve(ctx.cwd, given) };
  },
  run,
});

/** `--since 10m` (that long ago) or `--since 2026-11-25T10:00:00Z` (RFC 3339, epoch ms): ms since the epoch. */
async function parseSince(raw: string, now: number): Promise<number> {
  const { parseDuration, parseTime } = await import('../../timeparse.js');
  const text = raw.trim();
  try {
    return /^\d+(\.\d+)?[a-z]/i.test(text) && !/^\d{4}-/.test(text) ? now - parseDuration('--since', text) : parseTime('--since', text);
  } catch {
    throw new UsageError(`--since must be a duration such as 10m or 2h, or a time (RFC 3339 such as 2026-11-20T10:00:00Z, or epoch ms), not "${raw}"`);
  }
}

async function run(ctx: Context, o: LogsOptions): Promise<number | void> {
  const api = await ctx.api();
  if (o.export !== undefined) return exportStream(ctx, api, o, o.export);
  if (o.watch) return watchLobby(ctx, api, o);
  return showLobby(ctx, api, o);
}

/** What one stream's lines are at: the index to watch from, and the newest line seen (to never print one twice). */
interface StreamState {
  stream: LogStream;
  index: string;
  newest?: bigint;
}

/** Writes to stdout; a reader that went away ends the command (exit 141) rather than lines going nowhere. */
async function writeOut(ctx: Context, text: string): Promise<void> {
  if (text === '') return;
  const { stdoutSink } = await import('../../output/file.js');
  await stdoutSink(ctx.io.stdout).write(text);
}

/** The summary, then the lines; with --follow, the new lines until the lobby stops. */
async function showLobby(ctx: Context, api: ApiClient, o: LogsOptions): Promise<number | void> {
  const [{ getLobbyLogLines }, lines, { viewOptions }, { reformatJson }, { ResponseError }] = await Promise.all([
    import('../../api/operations.js'),
    import('../../output/views/log-lines.js'),
    import('../../output/views/options.js'),
    import('../../output/json.js'),
    import('../../errors.js'),
  ]);
  const json = ctx.global.json;
  // -q: the lines alone; a follow still reads the summary, to know when the lobby stopped.
  const wantSummary = !ctx.global.quiet || json || o.follow;
  const wantLines = o.follow || o.lines !== 0;
  const summary = wantSummary ? getLobbyLogs(api, o.lobbyId) : undefined;
  const answers = wantLines ? o.streams.map((s) => getLobbyLogLines(api, o.lobbyId, s)) : [];
  // The region's name, for the summary a person or a script reads (not --json's body, nor -q's lines).
  const lookup = !json && !ctx.global.quiet ? lookupRegions(ctx, api) : undefined;
  // Every request ends before any is reported: a failed one never leaves another's request open.
  await Promise.allSettled([summary, lookup, ...answers]);
  const first = summary ? await summary : undefined;
  const got = await Promise.all(answers);

  let notBase64 = 0;
  const states: StreamState[] = [];
  let entries: LogEntry[] = [];
  got.forEach((answer, i) => {
    const stream = o.streams[i]!;
    const res = lines.checkLogLines(answer.value);
    const list = lines.logEntries(stream, res);
    states.push({ stream, index: res.watch.index, newest: newestOf(list) });
    entries = lines.mergeEntries(entries, list);
  });
  if (o.since !== undefined) {
    const from = BigInt(o.since) * 1_000_000n;
    entries = entries.filter((e) => e.ns !== undefined && e.ns >= from);
  }
  if (o.lines !== undefined) entries = o.lines === 0 ? [] : entries.slice(-o.lines);
  const lineView = { ...viewOptions(ctx, ctx.io.stdout, o.utc), timestamps: ctx.io.stdout.isTTY === true || o.timestamps, both: o.streams.length > 1 };
  const warnNotBase64 = (list: LogEntry[]) => {
    for (const e of list) if (e.notBase64 && notBase64++ === 0) ctx.warn('the service sent lines that are not base64; they are shown as sent');
  };
  const show = async (list: LogEntry[]) => {
    warnNotBase64(list);
    if (json) return writeOut(ctx, lines.logEntryLines(list));
    return writeOut(ctx, lines.formatLogEntries(list, lineView));
  };
  const hasStopped = (res: LobbyLogsResponse) => Boolean(res.lobby?.status?.stopped);

  if (json && !o.follow) {
    // One document: the service's summary as received, with the lines the CLI read added as `log_lines`.
    if (first!.value === null || typeof first!.value !== 'object' || Array.isArray(first!.value)) throw new ResponseError("the service's lobby summary is not an object");
    const body = reformatJson(first!.text);
    const list = lines.safeJson(entries.map(lines.logEntryJson), 2).replace(/\n/g, '\n  ');
    const empty = Object.keys(first!.value).length === 0;
    warnNotBase64(entries);
    return writeOut(ctx, `${empty ? '{' : body.slice(0, -2) + ','}\n  "log_lines": ${list}\n}\n`);
  }
  if (json) {
    await writeOut(ctx, reformatJson(first!.text, 0) + '\n');
  } else if (first && !ctx.global.quiet) {
    const [regions, { formatLobbyLogs }] = await Promise.all([lookup, import('../../output/views/lobby.js')]);
    const view = viewOptions(ctx, ctx.io.stdout, o.utc);
    let text = formatLobbyLogs(first.value, { ...view, chart: o.chart, regions });
    const what = o.streams.length > 1 ? 'stdout and stderr' : o.streams[0] === 'std_out' ? 'stdout' : 'stderr';
    const following = o.follow && !hasStopped(first.value);
    if (view.tty) text += following ? lines.logHeading(view, `${what}, following (Ctrl-C to stop)`) : lines.logHeading(view, what, entries.length);
    else if (entries.length > 0 || following) text += '\n';
    await writeOut(ctx, text);
  }
  await show(entries);
  if (!o.follow) return;

  const already = hasStopped(first!.value);
  const ended = already ? first! : await followLines(ctx, api, o, states, show);
  if (typeof ended === 'number') return ended;
  if (json && !already) await writeOut(ctx, reformatJson(ended.text, 0) + '\n');
  const stopped = ended.value.lobby.status.stopped!;
  ctx.info(`lobby ${o.lobbyId} ${stopped.failed ? 'failed' : 'stopped'} with exit code ${stopped.exit_code}`);
  // The follow did what it was asked, whatever the server did (as `docker logs -f` and `kubectl logs -f`): its exit
  // code is shown, and `--watch` is the one that exits 1 on a failed lobby.
  return 0;
}

const newestOf = (list: LogEntry[]): bigint | undefined => {
  let newest: bigint | undefined;
  for (const e of list) if (e.ns !== undefined && (newest === undefined || e.ns > newest)) newest = e.ns;
  return newest;
};

/**
 * Watches each stream (the service holds a watch until a line comes, up to 40 s) and looks at the summary every
 * interval; once the lobby stopped, the watches end and the lines they had not brought yet are read from the most
 * recent ones. Returns the summary that said it stopped, or the exit code of Ctrl-C (130) or SIGTERM (143).
 */
async function followLines(
  ctx: Context,
  api: ApiClient,
  o: LogsOptions,
  states: StreamState[],
  show: (list: LogEntry[]) => Promise<void>,
): Promise<Answer<LobbyLogsResponse> | number> {
  const [{ getLobbyLogLines }, { sleep }, { checkLogLines, logEntries, mergeEntries }, { InterruptedError, NetworkError: Network }] = await Promise.all([
    import('../../api/operations.js'),
    import('../../shared/retry.js'),
    import('../../output/views/log-lines.js'),
    import('../../errors.js'),
  ]);
  // Aborted when the lobby stopped, or when one task failed: the others end with it.
  const done = new AbortController();
  const either = AbortSignal.any([ctx.signal, done.signal]);
  /** The entries of `list` newer than any shown of their stream (a service that answers a line twice shows it once). */
  const fresh = (state: StreamState, list: LogEntry[]) => {
    const newest = state.newest;
    const out = newest === undefined ? list : list.filter((e) => e.ns === undefined || e.ns > newest);
    state.newest = newestOf(out) ?? newest;
    return out;
  };
  // The service went away (a network failure once the follow had begun): each stream's request in flight may
  // still bring the lines the service sent as it stopped, so they are let finish, for a moment, before the end.
  let wentAway: NetworkError | undefined;
  let lastWait: NodeJS.Timeout | undefined;
  const watchStream = async (state: StreamState) => {
    while (!done.signal.aborted && !wentAway) {
      const began = performance.now();
      const answer = await getLobbyLogLines(api, o.lobbyId, state.stream, { watchIndex: state.index, signal: done.signal });
      const res = checkLogLines(answer.value);
      await show(fresh(state, logEntries(state.stream, res)));
      state.index = res.watch.index;
      await sleep(Math.max(0, WATCH_FLOOR_MS - (performance.now() - began)), either);
    }
  };
  let stopped: Answer<LobbyLogsResponse> | undefined;
  const watchStatus = async () => {
    while (!wentAway) {
      await sleep(o.intervalMs, either);
      const answer = await getLobbyLogs(api, o.lobbyId, { signal: done.signal });
      if (answer.value.lobby?.status?.stopped) {
        stopped = answer;
        done.abort();
        return;
      }
    }
  };
  const streams = states.map(watchStream);
  const tasks = [watchStatus(), ...streams];
  try {
    await Promise.all(
      tasks.map((t) =>
        t.catch((err: unknown) => {
          // A task ended by the stop (or by another's failure) is no failure of its own.
          if (done.signal.aborted && !ctx.signal.aborted && err === done.signal.reason) return;
          if (err instanceof Network && !ctx.signal.aborted) {
            if (!wentAway) {
              wentAway = err;
              lastWait = setTimeout(() => done.abort(), WENT_AWAY_WAIT_MS);
              // Once every stream's request has ended, none can bring a line: no reason to wait longer.
              void Promise.allSettled(streams).then(() => done.abort());
            }
            return;
          }
          done.abort();
          throw err;
        }),
      ),
    );
  } catch (err) {
    await Promise.allSettled(tasks);
    if (ctx.signal.aborted && err === ctx.signal.reason && err instanceof InterruptedError) return err.exitCode;
    throw err;
  } finally {
    clearTimeout(lastWait);
  }
  if (wentAway) throw await serviceWentAway(wentAway);
  // The lines printed between the last watch and the stop: the most recent ones, past what was shown.
  const rest = await Promise.all(states.map((s) => getLobbyLogLines(api, o.lobbyId, s.stream)));
  let last: LogEntry[] = [];
  for (const [i, answer] of rest.entries()) last = mergeEntries(last, fresh(states[i]!, logEntries(states[i]!.stream, checkLogLines(answer.value))));
  await show(last);
  return stopped!;
}

/** How long the streams' requests in flight may still bring lines once the service stopped answering. */
const WENT_AWAY_WAIT_MS = 2000;

/**
 * The service stopped answering during a follow (it answered when the follow began): said as such, and on a
 * loopback endpoint that refuses or drops the connection, as the emulator's stop it most likely is.
 */
async function serviceWentAway(err: NetworkError): Promise<NetworkError> {
  const [{ NetworkError: Network }, { isLoopbackHost }] = await Promise.all([import('../../errors.js'), import('../../config/endpoint.js')]);
  // "could not reach <host>: <what happened> (<code>)", as the transport says it.
  const [, host = err.hostname ?? 'the service', what = err.message] = /^could not reach (\S+): (.*)$/.exec(err.message) ?? [];
  const stopped = err.hostname !== undefined && isLoopbackHost(err.hostname) && ['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE'].includes(err.code);
  const out = new Network(
    stopped
      ? `the emulator at ${host} stopped answering during the follow: ${what}; its serve has stopped`
      : `the service at ${host} stopped answering during the follow: ${what}`,
    err.code,
    { cause: err, hostname: err.hostname },
  );
  out.hint = stopped ? 'the lines above are all it sent; follow again once `gamehost emulator serve` runs again' : 'the lines above are all it sent; follow again once it answers';
  return out;
}

/**
 * `--export`: the whole stream through the service's export (a presigned link to stdout.txt or stderr.txt), saved
 * as served: a regular file is written beside itself and renamed into place when complete, so a failure leaves none.
 */
async function exportStream(ctx: Context, api: ApiClient, o: LogsOptions, output: string): Promise<void> {
  const [{ exportLobbyLogLines }, { openPresignedGet }, { checkServiceUrl, toNetworkError }, { stdoutSink, bufferedFileSink }, { formatBytes, formatCount }, { writeJson }] =
    await Promise.all([
      import('../../api/operations.js'),
      import('../../api/presigned.js'),
      import('../../api/transport.js'),
      import('../../output/file.js'),
      import('../../output/format.js'),
      import('../../output/json.js'),
    ]);
  const stream = o.streams[0]!;
  const { url } = await exportLobbyLogLines(api, o.lobbyId, stream);
  const link = checkServiceUrl('log export url', url);
  const res = await openPresignedGet(ctx, api, link, 'log-export');
  const sink = output === '-' ? stdoutSink(ctx.io.stdout) : await bufferedFileSink(output, '--export');
  let bytes = 0;
  let newlines = 0;
  let last = 0x0a;
  try {
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        bytes += chunk.length;
        for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) newlines++;
        if (chunk.length) last = chunk[chunk.length - 1]!;
        await sink.write(chunk);
      }
    } catch (err) {
      throw ctx.signal.aborted ? ctx.signal.reason : err instanceof Error && err.name === 'OutputClosedError' ? err : toNetworkError(err, link);
    }
    await sink.commit();
  } catch (err) {
    await sink.abort();
    throw err;
  }
  const lines = newlines + (last === 0x0a ? 0 : 1);
  const name = stream === 'std_out' ? 'stdout' : 'stderr';
  if (ctx.global.json) return writeJson(ctx, { lobby_id: o.lobbyId, stream, url, output, lines, bytes });
  if (output === '-') return;
  if (ctx.global.quiet) return void ctx.io.stdout.write(output + '\n');
  const shown = path.relative(ctx.cwd, output);
  ctx.info(`Wrote ${formatCount(lines)} line${lines === 1 ? '' : 's'} of ${name} (${formatBytes(bytes)}) to ${shown && !shown.startsWith('..') && !path.isAbsolute(shown) ? shown : output}`);
}

/**
 * The game's regions by UUID (the logs name a region only by its UUID), asked once per command beside the logs,
 * in one attempt: a lookup the service refuses or fails only costs the names (the view shows the id, and
 * --verbose says why), never the command, nor retry waits.
 */
async function lookupRegions(ctx: Context, api: ApiClient): Promise<RegionNames | undefined> {
  try {
    const [game, { regionNames }] = await Promise.all([getGame(api, { attempts: 1 }), import('../../output/views/lobby.js')]);
    return regionNames(game);
  } catch (err) {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    ctx.verbose(`region names unknown, showing ids: ${(err as Error).message}`);
    return undefined;
  }
}

/**
 * Polls until the lobby stops: exits 0 when it stopped cleanly and 1 when it failed; Ctrl-C ends the wait at once.
 * An answer without metrics (a lobby stopped a while ago) keeps the last ones seen on a terminal.
 */
async function watchLobby(ctx: Context, api: ApiClient, o: LogsOptions): Promise<number> {
  const [{ isLive, watch }, { formatLobbyLogs, lobbyChangeKey, lobbyChangeLine }] = await Promise.all([
    import('../watch.js'),
    import('../../output/views/lobby.js'),
  ]);
  let lastSeen: LobbyViewOptions['lastSeen'];
  // Looked up once, beside the first poll; scripts' change lines and --json have no use for the names.
  const lookup = isLive(ctx) ? lookupRegions(ctx, api) : undefined;
  let regions: RegionNames | undefined;
  return watch<LobbyLogsResponse>(ctx, {
    everyMs: o.intervalMs,
    utc: o.utc,
    // -q prints the lines alone, and a watch shows none: its exit code is what a script wants.
    silent: ctx.global.quiet && !ctx.global.json,
    async poll() {
      const answer = getLobbyLogs(api, o.lobbyId);
      // Both end before either is reported (the lookup settles with the first poll; later polls find it done).
      await Promise.allSettled([answer, lookup]);
      regions ??= await lookup;
      return answer;
    },
    frame(logs, _previous, view) {
      const text = formatLobbyLogs(logs, { ...view, chart: o.chart, lastSeen, regions });
      if (logs.metrics && (logs.metrics.cpu.length || logs.metrics.memory?.length)) lastSeen = { metrics: logs.metrics, at: view.now };
      return text;
    },
    lines: (logs, previous, at) => (previous && lobbyChangeKey(logs) === lobbyChangeKey(previous) ? '' : lobbyChangeLine(logs, at)),
    done(logs) {
      const stopped = logs.lobby.status.stopped;
      if (!stopped) return undefined;
      if (!isLive(ctx)) ctx.info(`lobby ${o.lobbyId} ${stopped.failed ? 'failed' : 'stopped'} with exit code ${stopped.exit_code}`);
      return stopped.failed ? 1 : 0;
    },
  });
}
