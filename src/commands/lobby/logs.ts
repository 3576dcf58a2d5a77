import type { Context } from '../../context.js';
import type { ApiClient } from '../../api/client.js';
import type { LobbyLogsResponse } from '../../api/types.js';
import { getLobbyLogs } from '../../api/operations.js';
import { UsageError } from '../../errors.js';
import { writeJsonText } from '../../output/json.js';
import { formatLobbyLogs, lobbyChangeKey, lobbyChangeLine, type LobbyViewOptions } from '../../output/views/lobby.js';
import { viewOptions } from '../../output/views/options.js';
import { parseLobbyId, parseSeconds } from '../args.js';
import { isLive, watch } from '../watch.js';

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

export function parse(args: string[], opts: Record<string, unknown> = {}, ctx?: Context): LogsOptions {
  const lobbyId = parseLobbyId(args[0]!);
  const watch = opts.watch === true;
  if (opts.interval !== undefined && !watch) throw new UsageError('--interval goes with --watch');
  const chart = opts.chart === true;
  if (chart && ctx?.global.json) throw new UsageError('--chart draws for people; --json already carries every sample');
  return {
    lobbyId,
    watch,
    intervalMs: opts.interval === undefined ? DEFAULT_INTERVAL_MS : parseSeconds('--interval', opts.interval),
    chart,
    utc: opts.utc === true,
  };
}

export async function run(ctx: Context, o: LogsOptions): Promise<number | void> {
  const api = await ctx.api();
  if (o.watch) return watchLobby(ctx, api, o);
  const { value, text } = await getLobbyLogs(api, o.lobbyId);
  if (ctx.global.json) return writeJsonText(ctx, text);
  ctx.io.stdout.write(formatLobbyLogs(value, { ...viewOptions(ctx, ctx.io.stdout, o.utc), chart: o.chart }));
}

/**
 * Polls until the lobby stops: exits 0 when it stopped cleanly and 1 when it failed; Ctrl-C ends the wait at once.
 * A stopped lobby reports no metrics, so a terminal keeps showing the last ones seen.
 */
function watchLobby(ctx: Context, api: ApiClient, o: LogsOptions): Promise<number> {
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
