import type { Context } from '../../context.js';
import type { ApiClient } from '../../api/client.js';
import type { LobbyLogsResponse } from '../../api/types.js';
import { getLobbyLogs } from '../../api/operations.js';
import { sleep } from '../../api/retry.js';
import { UsageError } from '../../errors.js';
import { jsonLine, writeJson } from '../../output/json.js';
import { LiveFrame, watchFooter } from '../../output/views/live.js';
import { formatLobbyLogs, lobbyChangeKey, lobbyChangeLine, type LobbyViewOptions } from '../../output/views/lobby.js';
import { viewOptions } from '../../output/views/options.js';
import { parseLobbyId } from '../args.js';

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

/** `--interval 2`, `--interval 0.5`: seconds, at least a tenth. */
export function parseSeconds(flag: string, raw: unknown): number {
  const text = String(raw).trim();
  const seconds = /^\d+(\.\d+)?$/.test(text) ? Number(text) : NaN;
  if (!(seconds >= 0.1)) throw new UsageError(`${flag} must be a number of seconds of at least 0.1, not "${raw}"`);
  return Math.round(seconds * 1000);
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
  if (o.watch) return watch(ctx, api, o);
  const logs = await getLobbyLogs(api, o.lobbyId);
  if (ctx.global.json) return writeJson(ctx, logs);
  ctx.io.stdout.write(formatLobbyLogs(logs, { ...viewOptions(ctx, ctx.io.stdout, o.utc), chart: o.chart }));
}

/**
 * Polls until the lobby stops: a terminal sees the view redrawn in place, a pipe one line per change, --json one
 * body per change. Exits 0 when the lobby stopped cleanly and 1 when it failed; Ctrl-C ends the wait at once.
 */
async function watch(ctx: Context, api: ApiClient, o: LogsOptions): Promise<number> {
  const out = ctx.io.stdout;
  const frame = out.isTTY === true && !ctx.global.json ? new LiveFrame(out) : undefined;
  let last: string | undefined;
  let lastSeen: LobbyViewOptions['lastSeen'];
  try {
    for (;;) {
      const logs: LobbyLogsResponse = await getLobbyLogs(api, o.lobbyId);
      const stopped = logs.lobby.status.stopped;
      if (frame) {
        const view = viewOptions(ctx, out, o.utc);
        frame.draw(formatLobbyLogs(logs, { ...view, chart: o.chart, lastSeen }) + (stopped ? '' : '\n' + watchFooter(view, o.intervalMs)));
        if (logs.metrics && (logs.metrics.cpu.length || logs.metrics.memory?.length)) lastSeen = { metrics: logs.metrics, at: view.now };
      } else {
        const key = ctx.global.json ? JSON.stringify(logs) : lobbyChangeKey(logs);
        if (key !== last) out.write(ctx.global.json ? jsonLine(logs) : lobbyChangeLine(logs, ctx.now()));
        last = key;
      }
      if (stopped) {
        if (!frame) ctx.info(`lobby ${o.lobbyId} ${stopped.failed ? 'failed' : 'stopped'} with exit code ${stopped.exit_code}`);
        return stopped.failed ? 1 : 0;
      }
      await sleep(o.intervalMs, ctx.signal);
    }
  } finally {
    frame?.close();
  }
}
