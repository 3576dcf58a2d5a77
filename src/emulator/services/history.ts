// Lobby history export: computed and stored at request time, fetched through a presigned GET.
import { randomUUID } from 'node:crypto';
import { fail } from '../errors.js';
import type { BlobStore, LobbyRow, Store } from '../stores/store.js';
import type { Clock } from './clock.js';
import { toCsv, type CsvValue } from './csv.js';
import type { Game } from './games.js';
import { NAMESPACE_NAME, VERSION_ID, VERSION_NAME, lobbyGroupUuid, regionUuid } from './ids.js';
import { DEFAULT_TIER } from './tiers.js';

const EXPORT_TTL_MS = 60 * 60 * 1000;

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
export function historyRows(lobbies: LobbyRow[], queryStart: number, queryEnd: number): CsvValue[][] {
  const rows: CsvValue[][] = [];
  for (const l of lobbies) {
    const start = l.create_ts;
    const stopCapped = l.stop_ts ?? queryEnd;
    if (start > queryEnd || stopCapped <= queryStart) continue;
    const total = Math.max(0, stopCapped - start);
    const inWindow = Math.max(0, Math.min(stopCapped, queryEnd) - Math.max(start, queryStart));
    rows.push([
      l.lobby_id,
      l.namespace_id,
      NAMESPACE_NAME,
      regionUuid(l.region_id),
      l.region_id,
      DEFAULT_TIER,
      VERSION_ID,
      VERSION_NAME,
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
  constructor(private readonly deps: { store: Store; blobs: BlobStore; clock: Clock }) {}

  /** Stores the CSV of the game's lobbies overlapping [queryStart, queryEnd] and answers its presigned URL. */
  async export(game: Game, queryStart: number, queryEnd: number, origin: string): Promise<string> {
    if (queryStart < 0 || queryEnd < 0)
      fail('API_BAD_BODY', { reason: 'query_start and query_end are milliseconds since the epoch, never negative.' });
    if (queryStart > queryEnd) fail('API_BAD_BODY', { reason: 'query_start must not be after query_end.' });
    const { store, blobs } = this.deps;
    const now = this.deps.clock.now();
    await store.expireIdle(now);
    const lobbies = await store.lobbyHistory(game.namespaceId, queryStart, queryEnd);
    const csv = toCsv(EXPORT_COLUMNS, historyRows(lobbies, queryStart, queryEnd));
    const exportId = randomUUID();
    const expires = now + EXPORT_TTL_MS;
    await blobs.putExport(exportId, game.gameId, csv, now, expires);
    return blobs.exportUrl(origin, exportId, game.gameId, now, expires);
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
