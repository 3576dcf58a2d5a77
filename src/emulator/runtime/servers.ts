// The lobby servers one emulator runs (readiness `run`): started when a lobby is created, stopped when their lobby
// stops (through this emulator, or found stopped in the store: another replica, the idle lifetime, the ready
// window, the game deleted), and stopped with their lobbies when the emulator closes. The one place the handles live.
import { constants } from 'node:os';
import type { Game } from '../services/games.js';
import type { Lobbies } from '../services/lobbies.js';
import { lobbyEnvironment, lobbyPorts } from '../services/environment.js';
import type { LobbyRow, Store } from '../stores/store.js';
import { urlFromContainer } from './docker.js';
import { startLobbyServer, type HowToRun, type LobbyRun, type LogSink, type TimedSample } from './lobby.js';
import type { ExitInfo, RunPort } from './runtime.js';

/** How long a stopped lobby's server has between SIGTERM and SIGKILL. */
export const STOP_GRACE_MS = 5_000;
// Samples of ended runs kept for their lobbies' metrics, at most (the oldest go first).
const ENDED_KEPT = 256;

export interface LobbyServersOptions {
  /**
   * How a lobby's server runs (a command, or a pushed build: `--run-build`); throws, in one line for a person, when
   * it cannot run (no complete build), which stops the lobby failed.
   */
  how(game: Game, lobby: LobbyRow): HowToRun | Promise<HowToRun>;
  /** The lobbies' working directories go under it, one each. */
  workRoot: string;
  store: Store;
  lobbies: Lobbies;
  logs: LogSink;
  /** The endpoint a server calls (RIVET_API_ENDPOINT); known once the emulator listens. */
  endpoint(): string;
  /** Where a failure that no request can answer goes (a store that failed while recording an exit). */
  warn(message: string): void;
  stopGraceMs?: number;
  sampleEveryMs?: number;
}

/** The exit code a lobby records: the process's, or 128 + the signal's number as a shell reports it. */
export function exitCodeOf(exit: ExitInfo): number {
  if (exit.code !== null) return exit.code;
  const number = exit.signal === null ? undefined : constants.signals[exit.signal as NodeJS.Signals];
  return 128 + (number ?? 0);
}

export class LobbyServers {
  private readonly runs = new Map<string, LobbyRun>();
  private readonly ended = new Map<string, TimedSample[]>();
  /** Exits still being recorded in the store: close waits for them before the store closes. */
  private readonly recording = new Set<Promise<void>>();
  private closing = false;

  constructor(private readonly opts: LobbyServersOptions) {}

  /** Starts a new lobby's server; a server that cannot start stops its lobby, failed. */
  async start(game: Game, lobby: LobbyRow): Promise<void> {
    if (this.closing) return;
    const { lobbies } = this.opts;
    const ports: RunPort[] = [];
    for (const [label, port] of Object.entries(lobbyPorts(lobby))) if ('port' in port) ports.push({ label, protocol: 'tcp', port: port.port });
    let run: LobbyRun;
    try {
      const how = await this.opts.how(game, lobby);
      // A container on published ports reaches the emulator through host.docker.internal, not its loopback.
      const endpoint = 'build' in how && how.network === 'published' ? urlFromContainer(this.opts.endpoint(), 'published') : this.opts.endpoint();
      run = await startLobbyServer({
        lobbyId: lobby.lobby_id,
        env: lobbyEnvironment({ lobby, endpoint, token: lobbies.lobbyToken(game, lobby.lobby_id) }),
        ports,
        run: how,
        workRoot: this.opts.workRoot,
        logs: this.opts.logs,
        sampleEveryMs: this.opts.sampleEveryMs,
      });
    } catch (err) {
      const line = `its server did not start: ${(err as Error).message}`;
      this.opts.warn(`lobby ${lobby.lobby_id}: ${line}`);
      // Also where the lobby's owner looks (`lobby logs`, the logs API), on whichever replica they ask.
      await this.opts.logs.append(lobby.lobby_id, 'std_err', [Buffer.from(`[emulator] ${line}`)]).catch(() => {});
      await lobbies.stop(lobby.lobby_id, { exitCode: 1, failed: true });
      return;
    }
    this.runs.set(lobby.lobby_id, run);
    const recorded = run.exited.then(async (exit) => {
      this.runs.delete(lobby.lobby_id);
      this.keepEnded(lobby.lobby_id, run.samples());
      const code = exitCodeOf(exit);
      // A lobby stopped already (through the API, idle, its ready window) keeps that stop.
      await lobbies.stop(lobby.lobby_id, { exitCode: code, failed: code !== 0 }).catch((err: unknown) => {
        this.opts.warn(`lobby ${lobby.lobby_id}: its server's exit (${code}) was not recorded: ${(err as Error).message}`);
      });
    });
    this.recording.add(recorded);
    void recorded.finally(() => this.recording.delete(recorded));
  }

  /** The samples of a lobby's server, running or ended; undefined when this emulator ran none for it. */
  samples(lobbyId: string): TimedSample[] | undefined {
    return this.runs.get(lobbyId)?.samples() ?? this.ended.get(lobbyId);
  }

  /** Stops a lobby's server if this emulator runs one (its lobby stopped); resolves once nothing of it is left. */
  async stop(lobbyId: string): Promise<void> {
    await this.runs.get(lobbyId)?.stop(this.opts.stopGraceMs ?? STOP_GRACE_MS);
  }

  /** Stops the servers whose lobbies the store says stopped (or no longer holds): another replica, time, a deleted game. */
  async sweep(now: number): Promise<void> {
    if (this.runs.size === 0) return;
    const { store } = this.opts;
    await store.expireIdle(now);
    const ids = [...this.runs.keys()];
    const rows = await Promise.all(ids.map((id) => store.getLobby(id)));
    await Promise.all(
      ids.map((id, i) => {
        const row = rows[i];
        return row === undefined || (row.stop_ts !== null && row.stop_ts <= now) ? this.stop(id) : undefined;
      }),
    );
  }

  /** The emulator closes: no new servers; each running one is stopped and its lobby recorded stopped by its exit. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.runs.keys()].map((id) => this.stop(id)));
    while (this.recording.size > 0) await Promise.all([...this.recording]);
  }

  private keepEnded(lobbyId: string, samples: TimedSample[]): void {
    this.ended.set(lobbyId, samples);
    if (this.ended.size > ENDED_KEPT) this.ended.delete(this.ended.keys().next().value!);
  }
}
