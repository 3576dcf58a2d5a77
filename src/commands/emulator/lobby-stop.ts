// `gamehost emulator lobby stop <lobby-id>`: ends a lobby as if its process had exited.
import { listEmulatorGames, stopEmulatorLobby } from '../../api/operations.js';
import type { EmulatorStopLobbyRequest } from '../../api/types.js';
import type { Context } from '../../context.js';
import { ApiError } from '../../errors.js';
import { writeJson } from '../../output/json.js';
import type { RegionNames } from '../../output/views/lobby.js';
import { integer, parseLobbyId } from '../args.js';
import { defineCommand } from '../command.js';
import { DATA_DIR_OPTION, adminApi, emulatorPlace, type EmulatorPlace } from './local.js';

export interface LobbyStopOptions {
  lobbyId: string;
  body: EmulatorStopLobbyRequest;
  place: EmulatorPlace;
}

export default defineCommand({
  operands: ['<lobby-id>'],
  summary: 'Stop a lobby as if its server process had exited',
  options: [
    // What a process can exit with: 0 to 255 (a signal's death is reported by the runtime as 128 + the signal).
    { flags: '--exit-code <n>', description: 'exit code of the lobby process, 0 to 255 (default: 0)', value: integer({ min: 0, max: 255 }) },
    { flags: '--failed', description: 'mark the lobby failed (default: failed when the exit code is not 0)' },
    DATA_DIR_OPTION,
  ],
  notes: 'With -q, prints the lobby id alone.',
  examples: [
    'gamehost emulator lobby stop "$LOBBY"',
    'gamehost emulator lobby stop "$LOBBY" --exit-code 137 --json | jq .lobby.status   # in CI',
    'gamehost emulator lobby stop "$LOBBY" --endpoint http://127.0.0.1:6420   # a running emulator serve',
  ],
  parse(v, ctx): LobbyStopOptions {
    const lobbyId = parseLobbyId(v.lobbyId);
    const body: EmulatorStopLobbyRequest = {};
    if (v.exitCode !== undefined) body.exit_code = v.exitCode;
    if (v.failed) body.failed = true;
    return { lobbyId, body, place: emulatorPlace(v.dataDir, ctx) };
  },
  run,
});

async function run(ctx: Context, o: LobbyStopOptions): Promise<void> {
  const summary = await stop(ctx, o);
  if (ctx.global.json) return writeJson(ctx, summary);
  const first = summary.lobby.status.stopped;
  if (summary.already_stopped && first) {
    const { formatTime } = await import('../../output/format.js');
    const asked = o.body.exit_code !== undefined || o.body.failed !== undefined ? ': this stop changed nothing' : '';
    ctx.info(`lobby ${o.lobbyId} had already stopped at ${formatTime(first.stop_ts, { local: ctx.io.stderr.isTTY === true })} with exit code ${first.exit_code}; it keeps that stop${asked}`);
  }
  // -q: the lobby id alone.
  if (ctx.global.quiet) return void ctx.io.stdout.write(o.lobbyId + '\n');
  const [{ formatLobbyLogs }, { viewOptions }] = await Promise.all([import('../../output/views/lobby.js'), import('../../output/views/options.js')]);
  const regions = await regionsOf(ctx, o.place, summary.lobby.namespace_id);
  ctx.io.stdout.write(formatLobbyLogs(summary, { ...viewOptions(ctx, ctx.io.stdout, false), chart: false, regions }));
}

/**
 * The region names of the lobby's game, as `lobby logs` shows them (`Frankfurt (lnd-fra)`): the emulator's game
 * list names its regions, and the emulator derives each region's UUID from its name id. A list that cannot be had
 * only costs the names.
 */
async function regionsOf(ctx: Context, place: EmulatorPlace, namespaceId: string): Promise<RegionNames | undefined> {
  try {
    const api = await adminApi(ctx, place);
    const game = api && (await listEmulatorGames(api)).games.find((g) => g.namespace_id === namespaceId);
    if (!game) return undefined;
    const { regionUuid } = await import('../../emulator/services/ids.js');
    return new Map(game.regions.map((r) => [regionUuid(r.id), { name_id: r.id, display_name: r.name }]));
  } catch (err) {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    ctx.verbose(`region names unknown, showing ids: ${(err as Error).message}`);
    return undefined;
  }
}

async function stop(ctx: Context, o: LobbyStopOptions) {
  const { place } = o;
  // A data directory's lobby that is not there is named with the directory it was looked for in.
  const notFound = () => new ApiError(404, { code: 'API_NOT_FOUND', message: `Lobby ${o.lobbyId} not found in ${place.kind === 'data-dir' ? place.dir : ''}.` });
  const api = await adminApi(ctx, place);
  if (!api) throw notFound();
  try {
    return await stopEmulatorLobby(api, o.lobbyId, o.body);
  } catch (err) {
    if (place.kind === 'data-dir' && err instanceof ApiError && err.status === 404) throw notFound();
    throw err;
  }
}
