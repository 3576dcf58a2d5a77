// The lobby servers one emulator runs (readiness `run`): started when a lobby is created, stopped when their lobby
// stops (through this emulator, or found stopped in the store: another replica, the idle lifetime, the ready
// window, the game deleted), and stopped with their lobbies when the emulator closes. The one place the handles live.
import { constants } from 'node:os';
import type { Game } from '../services/games.js';
import type { StopOptions } from '../services/lobbies.js';
import { lobbyEnvironment, lobbyPorts, lobbyTier, type LobbyVersion } from '../services/environment.js';
import type { LobbyRow, Store } from '../stores/store.js';
import { collectGarbage } from './collect.js';
import type { Cgroups } from './cgroup.js';
import type { RunRecord } from './leftovers.js';
import { removeEmptyWorkDirs, startLobbyServer, WriteGate, type Backoff, type HowToRun, type LobbyRun, type LogSink, type TimedSample } from './lobby.js';
import { isSameProcess, killLeftover, processStart } from './process.js';
import type { ExitInfo, RunPort } from './runtime.js';

/** How long a stopped lobby's server has between SIGTERM and SIGKILL. */
export const STOP_GRACE_MS = 5_000;
/**
 * The exit code a lobby records when its owner finds it running without a server after a restart (its emulator was
 * killed, or its machine went down): 128 + SIGKILL's 9, what happened to the emulator or is done to what it left.
 */
export const OWNER_GONE_EXIT_CODE = 137;
/**
 * How long the emulator waits, once the last of its servers stopped and no other started, before it collects its
 * garbage (collect.ts): what running them grew (V8's young generation, the old generation's garbage) goes back, so
 * a staging emulator that ran a hundred servers and waits for the next is near its size at start.
 */
export const IDLE_COLLECT_MS = 5_000;
/**
 * How long a closing emulator waits for a store that does not answer to take its servers' last lines and exits
 * before it gives up on them (said in one line; its next start stops those lobbies: recover).
 */
export const CLOSE_WAIT_MS = 10_000;

export interface LobbyServersOptions {
  /**
   * How a lobby's server runs (a command, or a pushed build: `--run-build`); throws, in one line for a person, when
   * it cannot run (no complete build), which stops the lobby failed.
   */
  how(game: Game, lobby: LobbyRow, version: LobbyVersion): HowToRun | Promise<HowToRun>;
  /** The lobbies' working directories go under it, one each. */
  workRoot: string;
  store: Store;
  /**
   * Records a lobby stopped by its server's end (or by finding its server gone); true when this stopped it, false
   * when it had stopped already (and keeps that stop).
   */
  onExit(lobbyId: string, stop: StopOptions): Promise<boolean>;
  /** A lobby's token, for its server's environment (RIVET_TOKEN). */
  lobbyToken(game: Game, lobbyId: string): string;
  logs: LogSink;
  /** Where a command's server runs on Linux, each in a cgroup of its lobby's (undefined: a process group). */
  cgroups?: Cgroups;
  /** The data directory's record of what this emulator runs, for a sweep after it died (leftovers.ts). */
  record?: RunRecord;
  /** Variables of the emulator's environment its servers also get (`--pass-env`), beneath their lobby's. */
  passEnv?: Record<string, string>;
  /** The endpoint a server calls (RIVET_API_ENDPOINT); known once the emulator listens. */
  endpoint(): string;
  /** The endpoint a container on its bridge network calls instead: the listener of the lobby routes alone. */
  containerEndpoint?(): string;
  /** Where a failure that no request can answer goes (a store that failed while recording an exit). */
  warn(message: string): void;
  stopGraceMs?: number;
  sampleEveryMs?: number;
  /** Who runs the servers: the store records it as each lobby's owner (see ServerOwner). */
  owner: ServerOwner;
  /** Servers run at once, at most (the config's maxRunningLobbies). */
  maxRunning: number;
  /** A lobby's ready window (the config's readyWindowMs): restarted when its server starts after its build's image loaded. */
  readyWindowMs: number;
  /** The emulator's clock (its ready deadlines are on it). */
  now(): number;
  /** IDLE_COLLECT_MS and collectGarbage unless given (tests). */
  idleCollectMs?: number;
  collect?(): void;
  /** STORE_BACKOFF and CLOSE_WAIT_MS unless given (tests). */
  backoff?: Backoff;
  closeWaitMs?: number;
}

/** This emulator as the owner of the lobbies whose servers it runs: its replica id, and its own process. */
export interface ServerOwner {
  replica: string;
  pid: number;
  /** The process's start time (processStart), so a later process given the same pid is not taken for it. */
  start: number;
}

/** This process as a lobby's owner: the replica id given, its pid and start time. */
export async function serverOwner(replica: string): Promise<ServerOwner> {
  return { replica, pid: process.pid, start: (await processStart(process.pid)) ?? Date.now() - Math.round(process.uptime() * 1000) };
}

/** The exit code a lobby records: the process's, or 128 + the signal's number as a shell reports it. */
export function exitCodeOf(exit: ExitInfo): number {
  if (exit.code !== null) return exit.code;
  const number = exit.signal === null ? undefined : constants.signals[exit.signal as NodeJS.Signals];
  return 128 + (number ?? 0);
}

export class LobbyServers {
  private readonly runs = new Map<string, LobbyRun>();
  /** Exits and servers' pids still being recorded in the store: close waits for them before the store closes. */
  private readonly recording = new Set<Promise<void>>();
  private closing = false;
  /** Armed while no server runs nor is about to start, for the collection after IDLE_COLLECT_MS (see it). */
  private idle: NodeJS.Timeout | undefined;
  /** Places taken for servers about to start (reserve), counted with the running ones against maxRunning. */
  private reserved = 0;
  /** Starts under way (start): close waits for them before it stops what runs. */
  private readonly startsUnderWay = new Set<Promise<void>>();
  /** Lobbies whose server is being started here (start), not yet in runs. */
  private readonly starting = new Set<string>();
  /** Lobbies whose server ended (or never started) and whose stop is not yet in the store. */
  private readonly exiting = new Set<string>();
  /** Every record of the servers goes through it: held through an outage, written when the store answers again. */
  private readonly gate: WriteGate;

  constructor(private readonly opts: LobbyServersOptions) {
    this.gate = new WriteGate(opts.backoff, (down, why) =>
      opts.warn(
        down
          ? `the store does not answer (${why}): the servers' lines and exits wait, tried again with a backoff`
          : 'the store answers again: the lines and exits that waited are being written',
      ),
    );
  }

  /**
   * Whether every exit of this emulator's servers so far is in the store: none waits for a store that does not
   * answer. What sweep tells the store each second (touchReplica), and find hands out this replica's lobbies on.
   */
  current(): boolean {
    return !this.gate.down && this.exiting.size === 0;
  }

  get owner(): ServerOwner {
    return this.opts.owner;
  }

  /**
   * Takes a place for a lobby about to be created here, false when maxRunning servers run or are about to: taken
   * before the lobby is written and given back by start (or release), so concurrent creates never pass the bound.
   */
  reserve(): boolean {
    if (this.closing || this.runs.size + this.reserved >= this.opts.maxRunning) return false;
    clearTimeout(this.idle);
    this.reserved++;
    return true;
  }

  /** Gives back a place reserve took, for a lobby that was not created here after all. */
  release(): void {
    if (this.reserved > 0) this.reserved--;
    this.whenIdle();
  }

  /**
   * Restart recovery, before serving: reconcile (the lobbies of a dead predecessor of this replica stopped, its
   * servers killed), then this replica says its records are current. Answers how many lobbies it stopped.
   */
  async recover(now: number): Promise<number> {
    const stopped = await this.reconcile();
    await this.opts.store.touchReplica(this.opts.owner.replica, now);
    return stopped;
  }

  /**
   * The running lobbies this replica owns against the servers that run: one whose emulator process is gone (this
   * one's predecessor, killed, or a sibling on the same replica id) is stopped, failed with OWNER_GONE_EXIT_CODE,
   * after what its server left running is killed (only a process that still is the one started: pid and start
   * time); one of this process whose server it neither runs, starts nor records the exit of is stopped the same way
   * (what is known: nothing ran it). Answers how many lobbies it stopped.
   */
  private async reconcile(): Promise<number> {
    const { store, owner } = this.opts;
    let stopped = 0;
    for (const row of await store.ownedLobbies(owner.replica)) {
      if (row.owner_pid === owner.pid && row.owner_start === owner.start) {
        // A lobby written but whose start has not begun holds a reserved place: looked at once it has.
        const id = row.lobby_id;
        if (this.reserved > 0 || this.runs.has(id) || this.starting.has(id) || this.exiting.has(id)) continue;
      } else if (row.owner_pid !== null && row.owner_start !== null && (await isSameProcess(row.owner_pid, row.owner_start))) continue;
      else if (row.server_pid !== null && row.server_start !== null) await killLeftover(row.server_pid, row.server_start);
      if (await this.opts.onExit(row.lobby_id, { exitCode: OWNER_GONE_EXIT_CODE, failed: true })) stopped++;
    }
    // The empty working directories a dead predecessor's servers left (a running lobby's, another emulator's, stays).
    // A store that does not answer keeps them all, for the next start.
    await removeEmptyWorkDirs(this.opts.workRoot, async (id) => (await store.getLobby(id).then((l) => l?.stop_ts === null, () => true)));
    return stopped;
  }

  /** Starts a new lobby's server (its place reserved); a server that cannot start stops its lobby, failed. */
  start(game: Game, lobby: LobbyRow, version: LobbyVersion): Promise<void> {
    // Close waits for starts under way: one that ended after close looked at what runs would outlive the emulator.
    const starting = this.startServer(game, lobby, version);
    this.startsUnderWay.add(starting);
    void starting.finally(() => this.startsUnderWay.delete(starting)).catch(() => {});
    return starting;
  }

  private async startServer(game: Game, lobby: LobbyRow, version: LobbyVersion): Promise<void> {
    if (this.closing) {
      this.release();
      return;
    }
    const ports: RunPort[] = [];
    for (const [label, port] of Object.entries(lobbyPorts(lobby))) if ('port' in port) ports.push({ label, protocol: port.protocol ?? 'tcp', port: port.port });
    let run: LobbyRun;
    // Whether the lobby's ready window was held while its build's image loaded (restarted once its server starts).
    let held = false;
    const id = lobby.lobby_id;
    this.starting.add(id);
    try {
      const how = await this.opts.how(game, lobby, version);
      // A container on its bridge network calls the listener that serves it the lobby routes alone.
      const endpoint = 'build' in how && how.network.mode === 'bridge' ? this.opts.containerEndpoint!() : this.opts.endpoint();
      // A pushed build: its image by ID, loaded first if it is not yet (once for every lobby that waits meanwhile),
      // outside the ready window, which starts when the container does.
      const what =
        'build' in how
          ? {
              image: await how.images.imageFor(how.build, async () => {
                held = true;
                await this.opts.store.setReadyDeadline(lobby.lobby_id, null);
              }),
              docker: how.docker,
              owner: how.owner,
              network: how.network,
            }
          : this.opts.cgroups !== undefined
            ? // Held to its tier's hard memory limit, as a container is.
              { ...how, cgroup: this.opts.cgroups.lobby(id, { memory: lobbyTier(version.tier).memoryMax }) }
            : how;
      run = await startLobbyServer({
        lobbyId: lobby.lobby_id,
        env: { ...this.opts.passEnv, ...lobbyEnvironment({ lobby, endpoint, token: this.opts.lobbyToken(game, lobby.lobby_id), version }) },
        ports,
        run: what,
        workRoot: this.opts.workRoot,
        logs: this.opts.logs,
        gate: this.gate,
        sampleEveryMs: this.opts.sampleEveryMs,
        onSamples: this.sampleKeeper(lobby.lobby_id),
      });
    } catch (err) {
      const at = Date.now();
      this.exiting.add(id);
      this.starting.delete(id);
      this.release();
      const line = `its server did not start: ${(err as Error).message}`;
      this.opts.warn(`lobby ${id}: ${line}`);
      // Also where the lobby's owner looks (`lobby logs`, the logs API), on whichever replica they ask; then the
      // stop, both through an outage.
      const recorded = this.gate
        .run(() => this.opts.logs.append(id, 'std_err', [Buffer.from(`[emulator] ${line}`)], at))
        .catch((e: unknown) => this.opts.warn(`lobby ${id}: the line about its server's start was not kept: ${(e as Error).message}`))
        .then(() => this.recordExit(id, 1, at));
      this.track(recorded);
      await recorded;
      return;
    }
    // Its place passes from reserved to running in one step: the bound holds throughout.
    this.runs.set(id, run);
    this.starting.delete(id);
    this.release();
    if (held) {
      await this.opts.store.setReadyDeadline(lobby.lobby_id, this.opts.now() + this.opts.readyWindowMs).catch((err: unknown) => {
        this.opts.warn(`lobby ${lobby.lobby_id}: its ready window was not restarted after its build loaded: ${(err as Error).message}`);
      });
    }
    // What a restarted owner needs to kill what this process leaves if it dies: the server's pid and start time.
    // Written beside the answer, not before it (close waits for it, as for the exits).
    const pid = run.server.pid;
    if (pid !== undefined) this.track(this.recordServer(lobby.lobby_id, pid));
    const recorded = run.exited.then(async (exit) => {
      this.exiting.add(id);
      this.runs.delete(id);
      this.opts.record?.remove(id);
      this.whenIdle();
      await this.recordExit(id, exitCodeOf(exit), exit.at);
    });
    this.track(recorded);
  }

  /**
   * Records a lobby stopped by its server's end (`code`, at `at`), through an outage: its lines are in the store
   * already. A lobby stopped already (through the API, idle, its ready window) keeps that stop.
   */
  private async recordExit(lobbyId: string, code: number, at: number): Promise<void> {
    this.exiting.add(lobbyId);
    try {
      await this.gate.run(() => this.opts.onExit(lobbyId, { exitCode: code, failed: code !== 0, at }));
    } catch (err) {
      this.opts.warn(`lobby ${lobbyId}: its server's exit (${code}) was not recorded: ${(err as Error).message}`);
    } finally {
      this.exiting.delete(lobbyId);
    }
  }

  /** Arms the idle collection if no server runs nor is about to start (a later start disarms it). */
  private whenIdle(): void {
    if (this.closing || this.runs.size + this.reserved > 0) return;
    clearTimeout(this.idle);
    this.idle = setTimeout(() => {
      if (this.runs.size + this.reserved === 0) (this.opts.collect ?? collectGarbage)();
    }, this.opts.idleCollectMs ?? IDLE_COLLECT_MS);
    // Never what keeps the process alive.
    this.idle.unref();
  }

  private async recordServer(lobbyId: string, pid: number): Promise<void> {
    const started = await processStart(pid);
    if (started === undefined) return;
    if (this.runs.has(lobbyId)) this.opts.record?.add(lobbyId, pid, started);
    await this.gate.run(() => this.opts.store.setLobbyServer(lobbyId, pid, started)).catch((err: unknown) => {
      this.opts.warn(`lobby ${lobbyId}: its server's pid was not recorded: ${(err as Error).message}`);
    });
  }

  /**
   * Keeps a lobby's samples in the store as they are taken, so any replica answers its metrics with them: one write
   * at a time per lobby, the newest samples winning over those a slow store has not taken yet.
   */
  private sampleKeeper(lobbyId: string): (samples: TimedSample[]) => void {
    let latest: TimedSample[] | undefined;
    let writing = false;
    const write = async (): Promise<void> => {
      writing = true;
      while (latest !== undefined) {
        const samples = latest;
        latest = undefined;
        // Skipped while the store does not answer (the next sample has them all): never what keeps it busy.
        await this.gate.try(() => this.opts.store.setLobbySamples(lobbyId, JSON.stringify(samples))).catch((err: unknown) => {
          this.opts.warn(`lobby ${lobbyId}: its server's samples were not kept: ${(err as Error).message}`);
        });
      }
      writing = false;
    };
    return (samples) => {
      latest = samples;
      if (!writing) this.track(write());
    };
  }

  /** A store write close waits for before the store closes. */
  private track(write: Promise<void>): void {
    this.recording.add(write);
    void write.finally(() => this.recording.delete(write));
  }

  /** The samples of a lobby's server while this emulator runs it; undefined after (the store keeps them: sampleKeeper). */
  samples(lobbyId: string): TimedSample[] | undefined {
    return this.runs.get(lobbyId)?.samples();
  }

  /** Stops a lobby's server if this emulator runs one (its lobby stopped); resolves once nothing of it is left. */
  async stop(lobbyId: string): Promise<void> {
    await this.runs.get(lobbyId)?.stop(this.opts.stopGraceMs ?? STOP_GRACE_MS);
  }

  /**
   * Each second: the lobbies this replica owns reconciled with the servers that run (reconcile); this replica's
   * records said current (touchReplica) when they are; and the servers whose lobbies the store says stopped (or no
   * longer holds: another replica, time, a deleted game) stopped. Nothing while the store does not answer (the gate
   * tries it).
   */
  async sweep(now: number): Promise<void> {
    const { store, owner } = this.opts;
    if (this.gate.down || this.closing) return;
    let stopped = 0;
    if (!(await this.gate.try(async () => (stopped = await this.reconcile())))) return;
    if (stopped > 0) this.opts.warn(`stopped ${stopped} ${stopped === 1 ? 'lobby' : 'lobbies'} of this replica whose servers are gone (exit code ${OWNER_GONE_EXIT_CODE}, failed)`);
    if (this.current() && !(await this.gate.try(() => store.touchReplica(owner.replica, now)))) return;
    if (this.runs.size === 0) return;
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
    clearTimeout(this.idle);
    await Promise.allSettled([...this.startsUnderWay]);
    await Promise.all([...this.runs.keys()].map((id) => this.stop(id)));
    // A store that does not answer gets CLOSE_WAIT_MS to take the last lines and exits; then each is tried once more.
    const waited = setTimeout(() => {
      if (this.recording.size > 0) {
        this.opts.warn(`the store did not answer: ${this.exiting.size} ${this.exiting.size === 1 ? "server's exit" : "servers' exits"} and their last lines may not be recorded; the next start of this replica stops their lobbies`);
        this.gate.abandon();
      }
    }, this.opts.closeWaitMs ?? CLOSE_WAIT_MS);
    while (this.recording.size > 0) await Promise.all([...this.recording]);
    clearTimeout(waited);
    // Every server is gone: nothing for a sweep to find.
    this.opts.record?.close();
    await this.opts.cgroups?.close();
  }
}
