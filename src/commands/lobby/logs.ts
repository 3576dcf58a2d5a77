import type { Context } from '../../context.js';
import type { ApiClient } from '../../api/client.js';
import type { LobbyLogsResponse } from '../../api/types.js';
import { getGame, getLobbyLogs } from '../../api/operations.js';
import { UsageError } from '../../errors.js';
import { writeJsonText } from '../../output/json.js';
import type { LobbyViewOptions, RegionNames } from '../../output/views/lobby.js';
import { milliseconds, parseLobbyId } from '../args.js';
import { defineCommand } from '../command.js';

export const DEFAULT_INTERVAL_MS = 2000;

export interface LogsOptions {
  lobbyId: string;
  /** Re-poll until the lobby stops. */
  watch: boolean;
  intervalMs: number;
  /** Line charts with axes instead of sparklines. */
  chart: boolean;
  utc: boolean;
}

export default defineCommand({
  operands: ['<lobby-id>'],
  summary: "Show a lobby's status, timeline and job metrics",
  options: [
    { flags: '--watch', description: 'poll until the lobby stops; exit 0 if it stopped cleanly, 1 if it failed' },
    { flags: '--interval <seconds>', description: 'seconds between polls with --watch (default: 2)', value: milliseconds },
    { flags: '--chart', description: 'draw CPU and memory as line charts with axes' },
    { flags: '--utc', description: 'show times in UTC instead of the local zone' },
  ],
  examples: [
    'gamehost lobby logs "$LOBBY" --watch --chart',
    'gamehost lobby logs "$LOBBY" --json | jq .lobby.status   # in CI',
    'gamehost lobby logs "$LOBBY" --watch --interval 5 > lobby.log   # in CI: one line per change, exit 1 if it failed',
  ],
  parse(v, ctx): LogsOptions {
    const lobbyId = parseLobbyId(v.lobbyId);
    if (v.interval !== undefined && !v.watch) throw new UsageError('--interval goes with --watch');
    if (v.chart && ctx.global.json) throw new UsageError('--chart draws for people; --json already carries every sample');
    return { lobbyId, watch: v.watch, intervalMs: v.interval ?? DEFAULT_INTERVAL_MS, chart: v.chart, utc: v.utc };
  },
  run,
});

async function run(ctx: Context, o: LogsOptions): Promise<number | void> {
  const api = await ctx.api();
  if (o.watch) return watchLobby(ctx, api, o);
  // --json prints the service's body as it is: no region names to look up for it.
  if (ctx.global.json) return writeJsonText(ctx, (await getLobbyLogs(api, o.lobbyId)).text);
  const logs = getLobbyLogs(api, o.lobbyId);
  const lookup = lookupRegions(ctx, api);
  // Both end before either is reported: a failed logs call never leaves the lookup's request open.
  await Promise.allSettled([logs, lookup]);
  const [{ value }, regions, { formatLobbyLogs }, { viewOptions }] = await Promise.all([
    logs,
    lookup,
    import('../../output/views/lobby.js'),
    import('../../output/views/options.js'),
  ]);
  ctx.io.stdout.write(formatLobbyLogs(value, { ...viewOptions(ctx, ctx.io.stdout, o.utc), chart: o.chart, regions }));
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
