// Lobby history export: computed and stored at request time, fetched through a presigned GET.
import { randomUUID } from 'node:crypto';
import { requireCloud } from './auth.js';
import { baseUrl, readJson, reqInteger } from './body.js';
import type { Reply, RequestContext } from './context.js';
import { toCsv, type CsvValue } from './csv.js';
import { fail } from './errors.js';
import { NAMESPACE_ID, NAMESPACE_NAME, TIER_NAME, VERSION_ID, VERSION_NAME, lobbyGroupUuid, regionUuid } from './ids.js';
import { EXPORT_TTL_MS, checkPresigned, presignPath } from './presign.js';
import type { LobbyRow } from './store.js';

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
      TIER_NAME,
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

export async function exportHistory(rc: RequestContext): Promise<Reply> {
  const { store, secret } = rc.emu;
  const gameId = rc.params.game_id!;
  requireCloud(rc, gameId);
  const body = await readJson(rc);
  const queryStart = reqInteger(body, 'query_start');
  const queryEnd = reqInteger(body, 'query_end');
  if (queryStart < 0 || queryEnd < 0)
    fail('API_BAD_BODY', { reason: 'query_start and query_end are milliseconds since the epoch, never negative.' });
  if (queryStart > queryEnd) fail('API_BAD_BODY', { reason: 'query_start must not be after query_end.' });

  store.expireIdle(rc.now);
  const csv = toCsv(EXPORT_COLUMNS, historyRows(store.lobbyHistory(NAMESPACE_ID, queryStart, queryEnd), queryStart, queryEnd));
  const exportId = randomUUID();
  const expires = rc.now + EXPORT_TTL_MS;
  store.insertExport(exportId, gameId, csv, rc.now, expires);
  const url = baseUrl(rc) + presignPath(secret, 'GET', `/_export/${exportId}/export.csv`, expires);
  return { status: 200, json: { url } };
}

/** GET /_export/{export_id}/export.csv: no token, the presigned signature instead. */
export function downloadExport(rc: RequestContext): Reply {
  checkPresigned(rc.emu.secret, 'GET', rc.path, rc.query, rc.now);
  const stored = rc.emu.store.getExport(rc.params.export_id!);
  if (stored === undefined) fail('API_NOT_FOUND', { what: `Export ${rc.params.export_id}` });
  return {
    status: 200,
    body: stored.csv,
    headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': 'attachment; filename="export.csv"' },
  };
}
