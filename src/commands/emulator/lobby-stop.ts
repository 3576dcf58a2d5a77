// `gamehost emulator lobby stop <lobby-id>`: ends a lobby as if its process had exited.
import type { Context } from '../../context.js';
import type { LobbyLogsResponse } from '../../api/types.js';
import { ApiError } from '../../errors.js';
import { formatTime } from '../../output/format.js';
import { writeJson } from '../../output/json.js';
import { renderLobbyLogs } from '../../output/views/lobby.js';
import { parseInteger, parseLobbyId } from '../args.js';
import { emulatorPlace, type EmulatorPlace } from './local.js';

export interface LobbyStopOptions {
  lobbyId: string;
  exitCode?: number;
  /** Undefined: failed when the exit code is not 0. */
  failed?: boolean;
  place: EmulatorPlace;
}

export function parse(args: string[], opts: Record<string, unknown>, ctx: Context): LobbyStopOptions {
  const lobbyId = parseLobbyId(args[0]!);
  const options: LobbyStopOptions = { lobbyId, place: emulatorPlace(opts, ctx) };
  // The exit code of a process: a signed 32-bit integer, as the service stores it.
  if (opts.exitCode !== undefined) options.exitCode = parseInteger('--exit-code', opts.exitCode, { min: -2147483648, max: 2147483647 });
  if (opts.failed === true) options.failed = true;
  return options;
}

/** The lobby's summary, and whether it had stopped before this call (then it keeps that first stop). */
type StopAnswer = LobbyLogsResponse & { already_stopped?: boolean };

export async function run(ctx: Context, o: LobbyStopOptions): Promise<void> {
  const summary = o.place.kind === 'endpoint' ? await stopThroughEndpoint(ctx, o) : await stopInDataDir(o, o.place.dir);
  if (ctx.global.json) return writeJson(ctx, summary);
  const first = summary.lobby.status.stopped;
  if (summary.already_stopped && first) {
    const asked = o.exitCode !== undefined || o.failed !== undefined ? ': this stop changed nothing' : '';
    ctx.info(`lobby ${o.lobbyId} had already stopped at ${formatTime(first.stop_ts, { local: ctx.io.stderr.isTTY === true })} with exit code ${first.exit_code}; it keeps that stop${asked}`);
  }
  // -q: the lobby id alone.
  if (ctx.global.quiet) return void ctx.io.stdout.write(o.lobbyId + '\n');
  ctx.io.stdout.write(renderLobbyLogs(ctx, summary));
}

async function stopInDataDir(o: LobbyStopOptions, dir: string): Promise<StopAnswer> {
  const { stopLobby } = await import('../../emulator/index.js');
  const summary = await stopLobby(dir, o.lobbyId, { exitCode: o.exitCode, failed: o.failed });
  // The same answer the admin route gives, so both ways read alike.
  if (summary === null) throw new ApiError(404, { code: 'API_NOT_FOUND', message: `Lobby ${o.lobbyId} not found in ${dir}.` });
  return summary as unknown as StopAnswer;
}

async function stopThroughEndpoint(ctx: Context, o: LobbyStopOptions): Promise<StopAnswer> {
  const body: { exit_code?: number; failed?: boolean } = {};
  if (o.exitCode !== undefined) body.exit_code = o.exitCode;
  if (o.failed !== undefined) body.failed = o.failed;
  const api = await ctx.api();
  // Stopping twice keeps the first stop, so a retry cannot change the outcome.
  return api.call({ method: 'POST', path: `/_emulator/lobbies/${o.lobbyId}/stop`, body, auth: 'none', idempotent: true });
}
