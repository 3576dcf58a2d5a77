// A lobby's log lines: the lines (and their watch), the export of a stream, and the presigned GET of an export.
import { fail } from '../errors.js';
import type { LogStream } from '../stores/store.js';
import type { Reply, RequestContext } from './context.js';
import { authorization, optEnum, origin, readJson } from './request.js';

const STREAMS = ['std_out', 'std_err'] as const;

function streamParam(rc: RequestContext): LogStream {
  const stream = rc.query.get('stream');
  if (stream === null) fail('API_BAD_QUERY_PARAMETER', { name: 'stream', reason: 'required: std_out or std_err.' });
  if (!(STREAMS as readonly string[]).includes(stream))
    fail('API_BAD_QUERY_PARAMETER', { name: 'stream', reason: `expected std_out or std_err; got "${stream}".` });
  return stream as LogStream;
}

/** GET /cloud/games/{game_id}/matchmaker/lobbies/{lobby_id}/logs?stream=&watch_index= */
export async function getLobbyLogLines(rc: RequestContext): Promise<Reply> {
  const game = await rc.services.auth.cloud(authorization(rc), rc.params.game_id!);
  const stream = streamParam(rc);
  const index = rc.query.get('watch_index') ?? undefined;
  // A watch ends early when its client goes away or the server closes its connection.
  const gone = new AbortController();
  rc.res.once('close', () => gone.abort());
  return { status: 200, json: await rc.services.logs.read(game, rc.params.lobby_id!, stream, index, gone.signal) };
}

/** POST /cloud/games/{game_id}/matchmaker/lobbies/{lobby_id}/logs/export {stream} */
export async function exportLobbyLogs(rc: RequestContext): Promise<Reply> {
  const game = await rc.services.auth.cloud(authorization(rc), rc.params.game_id!);
  const body = await readJson(rc);
  const stream = optEnum(body, 'stream', STREAMS);
  if (stream === undefined) fail('API_BAD_BODY', { reason: 'stream is required.' });
  return { status: 200, json: { url: await rc.services.logs.export(game, rc.params.lobby_id!, stream, origin(rc)) } };
}

/** GET /_export/{export_id}/stdout.txt (or stderr.txt): no token, the presigned signature instead. */
export async function downloadLogExport(rc: RequestContext): Promise<Reply> {
  const text = await rc.services.history.download(rc.params.export_id!, rc.path, rc.query);
  const file = rc.path.slice(rc.path.lastIndexOf('/') + 1);
  return {
    status: 200,
    body: text,
    headers: { 'content-type': 'text/plain; charset=utf-8', 'content-disposition': `attachment; filename="${file}"` },
  };
}
