import type { Context } from '../../context.js';
import type { ApiClient } from '../../api/client.js';
import type { LobbyLogsResponse } from '../../api/types.js';
import { getLobbyLogs } from '../../api/operations.js';
import { UsageError } from '../../errors.js';
import { writeJsonText } from '../../output/json.js';
import type { LobbyViewOptions } from '../../output/views/lobby.js';
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
  const [{ value, text }, { formatLobbyLogs }, { viewOptions }] = await Promise.all([
    getLobbyLogs(api, o.lobbyId),
    import('../../output/views/lobby.js'),
    import('../../output/views/options.js'),
  ]);
  if (ctx.global.json) return writeJsonText(ctx, text);
  ctx.io.stdout.write(formatLobbyLogs(value, { ...viewOptions(ctx, ctx.io.stdout, o.utc), chart: o.chart }));
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
  return watch<LobbyLogsResponse>(ctx, {
    everyMs: o.intervalMs,
    utc: o.utc,
    poll: () => getLobbyLogs(api, o.lobbyId),
    frame(logs, _previous, view) {
      const text = formatLobbyLogs(logs, { ...view, chart: o.chart, lastSeen });
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
