// The places for lobbies' servers where this emulator runs them (readiness `run`): a new lobby takes one before it
// is written, and its server starts in it or the place goes back. The one place that reserves and releases.
import { fail } from '../errors.js';
import type { LobbyRow } from '../stores/store.js';
import type { LobbyVersion } from './environment.js';
import type { Game } from './games.js';

/** What runs lobbies' servers (readiness `run`, runtime/servers.ts): told of each lobby created and stopped here. */
export interface LobbyServerRunner {
  /** Recorded as the owner of each lobby created here (the replica, and this process). */
  readonly owner: { replica: string; pid: number; start: number };
  /** Takes a place for a server about to start; false at the bound of servers this emulator runs at once. */
  reserve(): boolean;
  /** Gives back a place for a lobby not created after all. */
  release(): void;
  /** Starts the server of a lobby created here, in the place reserved for it, as its version says. */
  start(game: Game, lobby: LobbyRow, version: LobbyVersion): Promise<void>;
  stop(lobbyId: string): Promise<void>;
  /** Whether every exit of this emulator's servers so far is written in the store (none waits for it to answer). */
  current(): boolean;
  /** The resource samples of the lobby's server while this emulator runs it, oldest first; else undefined. */
  samples(lobbyId: string): { cpu: number; memory: number }[] | undefined;
}

/**
 * Creates a lobby in a place taken for its server, where this emulator runs servers: `create` answers the lobby it
 * wrote (null: none, and the place goes back), whose server then starts. False, `create` not called, when every
 * place is taken; with no runner, `create` alone. `version` says what its server is told of its version.
 */
export async function startInPlace(
  runner: LobbyServerRunner | undefined,
  game: Game,
  create: () => Promise<LobbyRow | null>,
  version: (lobby: LobbyRow) => LobbyVersion,
): Promise<boolean> {
  if (runner === undefined) {
    await create();
    return true;
  }
  if (!runner.reserve()) return false;
  let lobby: LobbyRow | null;
  try {
    lobby = await create();
  } catch (err) {
    runner.release();
    throw err;
  }
  if (lobby === null) runner.release();
  else await runner.start(game, lobby, version(lobby));
  return true;
}

/** Past this emulator's bound of servers (maxRunningLobbies) a new lobby is refused. */
export function noPlace(maxRunning: number): never {
  fail('MATCHMAKER_TOO_MANY_LOBBIES', { reason: `this emulator runs ${maxRunning} lobbies' servers already (maxRunningLobbies).` });
}
