// A found or joined lobby is answered once it is ready: its ready call made (on any replica), and, where an emulator
// runs its server, that emulator's records current, so the server is there to meet the player.
import { fail } from '../errors.js';
import { NOT_READY, type LobbyRow } from '../stores/store.js';
import type { MatchmakingDeps } from './lobby-row.js';

/** Find and join answer once their lobby is ready, waiting at most this long (the service's request timeout). */
export const FIND_TIMEOUT_MS = 50_000;
/**
 * A lobby whose server an emulator runs is handed out only while that emulator said its records were current
 * (every exit of its servers written) this recently: it says so every second (LobbyServers.sweep), and stops
 * saying so while its store does not take what it has to write, or once it is gone.
 */
export const SERVED_WITHIN_MS = 5_000;

/** Waits (reading the store, so a ready call on any replica counts) until the lobby is ready or stopped. */
export async function untilReady(deps: Pick<MatchmakingDeps, 'clock' | 'store' | 'runner'>, found: LobbyRow, deadline: number): Promise<LobbyRow> {
  const { clock, store } = deps;
  let lobby = found;
  for (;;) {
    const now = clock.now();
    if (lobby.stop_ts !== null && lobby.stop_ts <= now) fail('MATCHMAKER_LOBBY_STOPPED', { lobby_id: lobby.lobby_id });
    // Ready, and (where an emulator runs its server) that emulator's records current: its server is there.
    if (lobby.ready_ts <= now && (await served(deps, lobby, now))) return lobby;
    if (now >= deadline) fail('API_REQUEST_TIMEOUT', { reason: `lobby ${lobby.lobby_id} was not ready within ${FIND_TIMEOUT_MS / 1000} s.` });
    // A lobby ready at a known time is waited for until then; one waiting for its server is looked at often.
    const wait = lobby.ready_ts === NOT_READY ? 50 : Math.min(Math.max(lobby.ready_ts - now, 5), 250);
    await new Promise((resolve) => setTimeout(resolve, wait));
    const current = await store.currentLobby(lobby.lobby_id, clock.now());
    if (current === undefined) fail('MATCHMAKER_LOBBY_STOPPED', { lobby_id: lobby.lobby_id });
    lobby = current;
  }
}

/**
 * Whether the emulator that runs the lobby's server (if one does) says its records are current: every exit of its
 * servers written, so a lobby it shows running has its server. One cut off from the store, or dead, does not.
 */
async function served(deps: Pick<MatchmakingDeps, 'store' | 'runner'>, lobby: LobbyRow, now: number): Promise<boolean> {
  const { runner } = deps;
  if (lobby.owner === null || lobby.owner === runner?.owner.replica) return lobby.owner === null || runner!.current();
  const seen = await deps.store.replicaSeen(lobby.owner);
  return seen !== undefined && seen >= now - SERVED_WITHIN_MS;
}
