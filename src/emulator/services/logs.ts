// A lobby's log lines (the service's logs routes): the most recent lines, a watch that waits for newer ones, and
// the export of a whole stream to a presigned file. The lines are in the Store, so any replica answers.
import { createHash } from 'node:crypto';
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
  config: { logRetentionMs: number };
  logWatch?: Partial<LogWatchTiming>;
}

// Lobbies whose logs one call of the store removes (one transaction each), so a sweep never holds it long.
const PURGE_BATCH = 100;

/** The export id of a lobby's stream, the same at every export of it: a UUID (version 8) from its SHA-256. */
export function streamExportId(lobbyId: string, stream: LogStream): string {
  const hex = createHash('sha256').update(`lobby-log\n${lobbyId}\n${stream}`).digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
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
  /** Aborted by close(): every watch answers at once with what it has. */
  private readonly closed = new AbortController();

  constructor(private readonly deps: LogsDeps) {
    this.timing = { ...LOG_WATCH, ...deps.logWatch };
  }

  /** A lobby of the game's namespace, and whether its process has started (by now, or before its stop). */
  private async lobby(game: Game, lobbyId: string): Promise<{ lobby: LobbyRow; started: boolean }> {
    const lobby = await this.deps.store.getLobby(lobbyId);
    if (lobby === undefined || lobby.namespace_id !== game.namespaceId) fail('API_NOT_FOUND', { what: `Lobby ${lobbyId}` });
    return { lobby, started: lobby.start_ts <= (lobby.stop_ts ?? this.deps.clock.now()) };
  }

  /**
   * Appends a lobby's output lines (without their line endings), stamped at `at` (when they arrived; now by default):
   * what a running lobby's output feeds.
   */
  async append(lobbyId: string, stream: LogStream, lines: Buffer[], at?: number, firstTs?: number): Promise<void> {
    await this.deps.store.appendLobbyLogs(lobbyId, stream, lines, at ?? this.deps.clock.now(), undefined, firstTs);
  }

  /**
   * The retention: the lines (and server samples) of lobbies stopped longer than logRetentionMs ago are removed.
   * Answers how many lobbies' logs went. Any replica may run it (the store's deletes are idempotent).
   */
  async sweep(): Promise<number> {
    const before = this.deps.clock.now() - this.deps.config.logRetentionMs;
    let removed = 0;
    for (let n = PURGE_BATCH; n === PURGE_BATCH; removed += n) n = await this.deps.store.purgeStoppedLogs(before, PURGE_BATCH);
    return removed;
  }

  /**
   * The emulator is closing (its lobbies' servers gone, their last lines recorded): the watches under way answer now,
   * and any asked later at once, so no watch holds a closing server's connection for its whole wait.
   */
  close(): void {
    this.closed.abort();
  }

  /**
   * Without a watch index, the most recent lines; with one, the lines after it, waiting for one to arrive (see
   * LogWatchTiming). `client` ends the wait early (the client went away), as close() does.
   */
  async read(game: Game, lobbyId: string, stream: LogStream, index: string | undefined, client?: AbortSignal): Promise<LogLines> {
    const signal = client === undefined ? this.closed.signal : AbortSignal.any([client, this.closed.signal]);
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
      if ((lines.length > 0 && waited >= minMs) || waited >= waitMs || signal.aborted) return answer(lines, after);
      const pause = lines.length > 0 ? minMs - waited : Math.min(pollMs, waitMs - waited);
      await sleep(Math.max(1, pause), undefined, { signal }).catch(() => {});
    }
  }

  /**
   * Saves the whole stream as stdout.txt or stderr.txt and answers its presigned GET (an hour). A stream has one
   * export file at a time (its id is the stream's): a new export replaces the last, and exports of one stream asked
   * while one is being made share it, so asking again and again costs neither space nor a read each.
   */
  async export(game: Game, lobbyId: string, stream: LogStream, origin: string): Promise<string> {
    const { started } = await this.lobby(game, lobbyId);
    if (!started) fail('MATCHMAKER_LOBBY_NOT_STARTED', { lobby_id: lobbyId });
    const { blobs } = this.deps;
    const exportId = streamExportId(lobbyId, stream);
    let saving = this.exporting.get(exportId);
    if (saving === undefined) {
      saving = this.saveExport(game, lobbyId, stream, exportId).finally(() => this.exporting.delete(exportId));
      this.exporting.set(exportId, saving);
    }
    const { now, file } = await saving;
    return blobs.exportUrl(origin, exportId, game.gameId, now, now + EXPORT_TTL_MS, file);
  }

  /** Exports being made, by export id: one at a time per stream. */
  private readonly exporting = new Map<string, Promise<{ now: number; file: ExportFile }>>();

  private async saveExport(game: Game, lobbyId: string, stream: LogStream, exportId: string): Promise<{ now: number; file: ExportFile }> {
    const { store, blobs } = this.deps;
    const lines = await store.lobbyLogs(lobbyId, stream, Number.MAX_SAFE_INTEGER, -1);
    // Text for every store (a PostgreSQL text column refuses NUL): invalid UTF-8 and NUL become U+FFFD.
    const text = lines.map((l) => `${l.line.toString('utf8').replaceAll('\0', '\uFFFD')}\n`).join('');
    const now = this.deps.clock.now();
    const file = EXPORT_FILES[stream];
    await blobs.putExport(exportId, game.gameId, text, now, now + EXPORT_TTL_MS, file);
    return { now, file };
  }
}
