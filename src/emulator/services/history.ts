// Lobby history export: computed and stored at request time, fetched through a presigned GET.
import { randomUUID } from 'node:crypto';
import { fail } from '../errors.js';
import type { BlobStore, HistoryCursor, LobbyRow, Store } from '../stores/store.js';
import type { Clock } from './clock.js';
import { ExportBounds } from './export-bounds.js';
import { toCsvRows, withHeader, type CsvValue } from './csv.js';
import type { Game } from './games.js';
import type { LobbyVersion } from './environment.js';
import { lobbyGroupUuid, regionUuid } from './ids.js';
import { describe, type LobbyVersions, type RunningVersion } from './lobby-versions.js';

const EXPORT_TTL_MS = 60 * 60 * 1000;
/** The lobbies an export reads at a time: a few milliseconds of a replica's time each. */
const HISTORY_PAGE = 500;

export const EXPORT_COLUMNS = [
  'lobby_id',
  'namespace_id',
  'namespace_name',
  'region_id',
  'region_name',
  'tier_name',
  'version_id',
  'version_name',
  'lobby_group_id',
  'lobby_group_name',
  'start_ts',
  'stop_ts',
  'total_uptime_ms',
  'query_uptime_ms',
] as const;

/**
 * One CSV row per lobby, as production computes it: the lifetime starts at create_ts, a running lobby counts up
 * to query_end, and a lobby whose lifetime misses the window is dropped. Names are name ids (production's too).
 */
export function historyRows(lobbies: LobbyRow[], queryStart: number, queryEnd: number, versionOf: (lobby: LobbyRow) => LobbyVersion): CsvValue[][] {
  const rows: CsvValue[][] = [];
  for (const l of lobbies) {
    const start = l.create_ts;
    const stopCapped = l.stop_ts ?? queryEnd;
    if (start > queryEnd || stopCapped <= queryStart) continue;
    const total = Math.max(0, stopCapped - start);
    const inWindow = Math.max(0, Math.min(stopCapped, queryEnd) - Math.max(start, queryStart));
    const version = versionOf(l);
    rows.push([
      l.lobby_id,
      l.namespace_id,
      version.namespaceName,
      regionUuid(l.region_id),
      l.region_id,
      version.tier,
      version.versionId,
      version.versionName,
      lobbyGroupUuid(l.game_mode),
      l.game_mode,
      start,
      l.stop_ts,
      total,
      inWindow,
    ]);
  }
  return rows;
}

export class History {
  /** What a game's exports may take of this replica (export-bounds.ts). */
  readonly bounds = new ExportBounds();

  constructor(private readonly deps: { store: Store; blobs: BlobStore; clock: Clock; lobbyVersions: LobbyVersions }) {}

  /** Stores the CSV of the game's lobbies overlapping [queryStart, queryEnd] and answers its presigned URL. */
  async export(game: Game, queryStart: number, queryEnd: number, origin: string): Promise<string> {
    if (queryStart < 0 || queryEnd < 0)
      fail('API_BAD_BODY', { reason: 'query_start and query_end are milliseconds since the epoch, never negative.' });
    if (queryStart > queryEnd) fail('API_BAD_BODY', { reason: 'query_start must not be after query_end.' });
    const now = this.deps.clock.now();
    const end = this.bounds.begin(game.gameId, now);
    try {
      const expires = now + EXPORT_TTL_MS;
      const { exportId, bytes } = await this.make(game, queryStart, queryEnd, now, expires);
      end({ bytes, expires });
      return this.deps.blobs.exportUrl(origin, exportId, game.gameId, now, expires);
    } finally {
      end();
    }
  }

  /**
   * The CSV of the game's lobbies overlapping [queryStart, queryEnd], stored until `expires`: its id and size. Read
   * and made into CSV a page at a time, letting the replica's other requests in between, so a long history holds
   * them for a page at most (and for the one write that stores the CSV).
   */
  private async make(game: Game, queryStart: number, queryEnd: number, now: number, expires: number): Promise<{ exportId: string; bytes: number }> {
    const { store, blobs, lobbyVersions } = this.deps;
    await store.expireIdle(now);
    const { namespaceName } = await lobbyVersions.current(game);
    // Each lobby names the version it ran: each version read once.
    const versions = new Map<string, RunningVersion>();
    const pages: string[] = [];
    let after: HistoryCursor | undefined;
    for (;;) {
      const lobbies = await store.lobbyHistory(game.namespaceId, queryStart, queryEnd, HISTORY_PAGE, after);
      for (const l of lobbies) if (!versions.has(l.version_id)) versions.set(l.version_id, await lobbyVersions.version(game, l.version_id));
      pages.push(toCsvRows(historyRows(lobbies, queryStart, queryEnd, (l) => describe(versions.get(l.version_id)!, namespaceName, l))));
      if (lobbies.length < HISTORY_PAGE) break;
      const last = lobbies.at(-1)!;
      after = { create_ts: last.create_ts, lobby_id: last.lobby_id };
      await new Promise((resolve) => setImmediate(resolve));
    }
    const csv = withHeader(EXPORT_COLUMNS, pages.join(''));
    const exportId = randomUUID();
    await blobs.putExport(exportId, game.gameId, csv, now, expires);
    return { exportId, bytes: Buffer.byteLength(csv) };
  }

  /** The presigned GET of an export: its CSV, or API_NOT_FOUND. */
  async download(exportId: string, path: string, query: URLSearchParams): Promise<string> {
    const { blobs } = this.deps;
    await blobs.checkPresigned('GET', path, query, this.deps.clock.now());
    const csv = await blobs.readExport(exportId);
    if (csv === undefined) fail('API_NOT_FOUND', { what: `Export ${exportId}` });
    return csv;
  }
}
