// A lobby's log lines (the service's logs routes): the most recent lines, a watch that waits for newer ones, and
// the export of a whole stream to a presigned file. The lines are in the Store, so any replica answers.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { fail } from '../errors.js';
import type { BlobStore, ExportFile, LobbyRow, LogLine, LogStream, Store } from '../stores/store.js';
import type { Clock } from './clock.js';
import type { Game } from './games.js';

/** How a watch waits: up to waitMs for a line, looking every pollMs, and never answering before minMs. */
export interface LogWatchTiming {
  waitMs: number;
  pollMs: number;
  minMs: number;
}

export const LOG_WATCH: LogWatchTiming = Object.freeze({ waitMs: 40_000, pollMs: 500, minMs: 1_000 });
/** Lines in an answer without a watch index, and at most in an answer to a watch. */
export const RECENT_LINES = 256;
export const WATCH_LINES = 64;
const EXPORT_TTL_MS = 60 * 60 * 1000;
const EXPORT_FILES: Record<LogStream, ExportFile> = { std_out: 'stdout.txt', std_err: 'stderr.txt' };

/** CloudGamesGetLobbyLogsResponse. */
export interface LogLines {
  lines: string[];
  timestamps: string[];
  watch: { index: string };
}

export interface LogsDeps {
  store: Store;
  blobs: BlobStore;
  clock: Clock;
  logWatch?: Partial<LogWatchTiming>;
}

/** A stamp (microseconds) as the service's watch index: a nanosecond timestamp, as a string. */
export function watchIndex(ts: number): string {
  return ts === 0 ? '0' : `${ts}000`;
}

/** A watch index back to the stamp it was made from; API_BAD_QUERY_PARAMETER unless it is one. */
export function parseWatchIndex(text: string): number {
  if (!/^\d{1,20}$/.test(text)) fail('API_BAD_QUERY_PARAMETER', { name: 'watch_index', reason: 'expected the watch.index of an earlier answer.' });
  const micros = BigInt(text) / 1000n;
  // Far beyond any stamp (past the year 2255): nothing is newer.
  return micros > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(micros);
}

/** A stamp as RFC 3339 with nanoseconds, e.g. 2026-11-25T20:35:46.123456000Z. */
export function logTimestamp(ts: number): string {
  const ms = Math.floor(ts / 1000);
  return `${new Date(ms).toISOString().slice(0, -1)}${String(ts % 1000).padStart(3, '0')}000Z`;
}

function answer(lines: LogLine[], index: number): LogLines {
  return {
    lines: lines.map((l) => l.line.toString('base64')),
    timestamps: lines.map((l) => logTimestamp(l.ts)),
    watch: { index: watchIndex(lines.at(-1)?.ts ?? index) },
  };
}

export class LobbyLogs {
  private readonly timing: LogWatchTiming;

  constructor(private readonly deps: LogsDeps) {
    this.timing = { ...LOG_WATCH, ...deps.logWatch };
  }

  /** A lobby of the game's namespace, and whether its process has started (by now, or before its stop). */
  private async lobby(game: Game, lobbyId: string): Promise<{ lobby: LobbyRow; started: boolean }> {
    const lobby = await this.deps.store.getLobby(lobbyId);
    if (lobby === undefined || lobby.namespace_id !== game.namespaceId) fail('API_NOT_FOUND', { what: `Lobby ${lobbyId}` });
    return { lobby, started: lobby.start_ts <= (lobby.stop_ts ?? this.deps.clock.now()) };
  }

  /** Appends a lobby's output lines (without their line endings), stamped now: what a running lobby's output feeds. */
  async append(lobbyId: string, stream: LogStream, lines: Buffer[]): Promise<void> {
    await this.deps.store.appendLobbyLogs(lobbyId, stream, lines, this.deps.clock.now());
  }

  /**
   * Without a watch index, the most recent lines; with one, the lines after it, waiting for one to arrive (see
   * LogWatchTiming). `signal` ends the wait early (the client went away, the server is closing).
   */
  async read(game: Game, lobbyId: string, stream: LogStream, index: string | undefined, signal?: AbortSignal): Promise<LogLines> {
    const after = index === undefined ? undefined : parseWatchIndex(index);
    const { started } = await this.lobby(game, lobbyId);
    const { store } = this.deps;
    if (after === undefined) return answer(started ? await store.lobbyLogs(lobbyId, stream, RECENT_LINES) : [], 0);
    const { waitMs, pollMs, minMs } = this.timing;
    if (!started) {
      await sleep(minMs, undefined, { signal }).catch(() => {});
      return answer([], after);
    }
    const begun = performance.now();
    for (;;) {
      const lines = await store.lobbyLogs(lobbyId, stream, WATCH_LINES, after);
      const waited = performance.now() - begun;
      if ((lines.length > 0 && waited >= minMs) || waited >= waitMs || signal?.aborted) return answer(lines, after);
      const pause = lines.length > 0 ? minMs - waited : Math.min(pollMs, waitMs - waited);
      await sleep(Math.max(1, pause), undefined, { signal }).catch(() => {});
    }
  }

  /** Saves the whole stream as stdout.txt or stderr.txt and answers its presigned GET (an hour). */
  async export(game: Game, lobbyId: string, stream: LogStream, origin: string): Promise<string> {
    const { started } = await this.lobby(game, lobbyId);
    if (!started) fail('MATCHMAKER_LOBBY_NOT_STARTED', { lobby_id: lobbyId });
    const { store, blobs } = this.deps;
    const lines = await store.lobbyLogs(lobbyId, stream, Number.MAX_SAFE_INTEGER, -1);
    // Text for every store (a PostgreSQL text column refuses NUL): invalid UTF-8 and NUL become U+FFFD.
    const text = lines.map((l) => `${l.line.toString('utf8').replaceAll('\0', '\uFFFD')}\n`).join('');
    const now = this.deps.clock.now();
    const exportId = randomUUID();
    const file = EXPORT_FILES[stream];
    await blobs.putExport(exportId, game.gameId, text, now, now + EXPORT_TTL_MS, file);
    return blobs.exportUrl(origin, exportId, game.gameId, now, now + EXPORT_TTL_MS, file);
  }
}
