// The faults a spec asks for (../faults.ts), applied to one request before its handler: a delay, a PUT that fails
// or loses its connection, a rate-limited API call.
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { documentationOf } from '../errors.js';
import type { Faults } from '../faults.js';
import type { RequestContext } from './context.js';

/** Applies the faults to one request; true when the fault answered (or cut) it and the handler must not run. */
export async function injectFault(faults: Faults, rc: RequestContext): Promise<boolean> {
  if (rc.path.startsWith('/_emulator/')) return false;
  if (faults.latencyMs) await sleep(faults.latencyMs);
  const isPut = rc.method === 'PUT' && rc.path.startsWith('/_upload/');
  const isApi = !isPut && !rc.path.startsWith('/_export/');
  if (isPut && faults.putReset > 0 && faults.random() < faults.putReset) {
    // Take part of the body, then drop the connection: the client sees a reset mid-upload.
    const socket = rc.req.socket;
    const half = Number(rc.req.headers['content-length'] ?? 0) / 2;
    let seen = 0;
    await new Promise<void>((resolve) => {
      const onData = (chunk: Buffer) => {
        seen += chunk.length;
        if (seen < half) return;
        rc.req.off('data', onData);
        resolve();
      };
      rc.req.on('data', onData);
      rc.req.once('end', resolve);
      rc.req.once('error', resolve);
    });
    socket.destroy();
    return true;
  }
  if (isPut && faults.putError > 0 && faults.random() < faults.putError) {
    rc.req.resume();
    if (!rc.req.readableEnded) await once(rc.req, 'end');
    reply(rc, 500, 'ERROR', `An internal error has occurred (ray ${rc.rayId}).`);
    return true;
  }
  if (isApi && faults.rateLimit > 0 && faults.random() < faults.rateLimit) {
    const retryAt = Math.ceil((Date.now() + 1000) / 1000) * 1000;
    reply(rc, 429, 'API_RATE_LIMIT', 'Too many requests; try again later.', {
      'retry-after': new Date(retryAt).toUTCString(),
    }, { retry_after_ms: retryAt - Date.now() });
    return true;
  }
  return false;
}

function reply(rc: RequestContext, status: number, code: string, message: string, headers: Record<string, string> = {}, metadata?: unknown): void {
  const body = JSON.stringify({ code, message, ray_id: rc.rayId, documentation: documentationOf(code), metadata });
  rc.res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  rc.res.end(body);
}
