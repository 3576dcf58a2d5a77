// History routes: the export, and the presigned GET of its CSV.
import type { Reply, RequestContext } from './context.js';
import { authorization, origin, readJson, reqInteger } from './request.js';

export async function exportHistory(rc: RequestContext): Promise<Reply> {
  const gameId = rc.params.game_id!;
  const game = await rc.services.auth.cloud(authorization(rc), gameId);
  const body = await readJson(rc);
  const queryStart = reqInteger(body, 'query_start');
  const queryEnd = reqInteger(body, 'query_end');
  return { status: 200, json: { url: await rc.services.history.export(game, queryStart, queryEnd, origin(rc)) } };
}

/** GET /_export/{export_id}/export.csv: no token, the presigned signature instead. */
export async function downloadExport(rc: RequestContext): Promise<Reply> {
  const csv = await rc.services.history.download(rc.params.export_id!, rc.path, rc.query);
  return {
    status: 200,
    body: csv,
    headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': 'attachment; filename="export.csv"' },
  };
}
