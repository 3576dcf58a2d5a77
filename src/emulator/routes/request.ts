// Reading requests the way the service does: bodies of a known length, at most 1 MiB, a JSON object; typed fields.
import type { RequestContext } from './context.js';
import { EmulatorError, fail } from '../errors.js';

export const MAX_JSON_BODY = 1024 * 1024;
/** Arrays and objects nested deeper than this are refused, as many parsers do: what is kept is written back as JSON. */
export const MAX_JSON_DEPTH = 64;

export type JsonObject = Record<string, unknown>;

/** The declared Content-Length, or a 400 (code given) for chunked or length-less bodies. */
export function declaredLength(rc: RequestContext, code: 'API_BAD_BODY' | 'UPLOAD_INVALID'): number {
  const { headers } = rc.req;
  const raw = headers['content-length'];
  if (headers['transfer-encoding'] !== undefined || raw === undefined || !/^\d+$/.test(raw)) {
    rc.res.setHeader('connection', 'close');
    fail(code, { reason: 'the body must be sent with a Content-Length header (chunked encoding is refused).' });
  }
  return Number(raw);
}

/**
 * The body as text, of a known length and at most `max` bytes (API_BAD_BODY otherwise); counted against the client's
 * and the listener's share of bodies in flight while it arrives (bodies.ts: 429 API_RATE_LIMIT, unread, past either),
 * and answered 408 API_BODY_TIMEOUT, the connection closed, when it does not arrive within the time its length allows.
 */
export async function readText(rc: RequestContext, max = MAX_JSON_BODY): Promise<string> {
  const length = declaredLength(rc, 'API_BAD_BODY');
  if (length > max) {
    // Do not drain a huge body just to keep the connection alive.
    rc.res.setHeader('connection', 'close');
    fail('API_BAD_BODY', { reason: `the body is ${length} bytes; at most ${max} are accepted.` });
  }
  const release = rc.bodies.take(clientAddress(rc), length);
  if (typeof release === 'string') {
    rc.res.setHeader('connection', 'close');
    const reason =
      release === 'address'
        ? `bodies of ${rc.bodies.perAddress / 1024 / 1024} MiB at most may be on their way from one address at once; send this one when they are in.`
        : 'the emulator is receiving as many request bodies as it holds at once; send this one again shortly.';
    throw new EmulatorError('API_RATE_LIMIT', { reason }, { retry_after_ms: 1000 }, { 'retry-after': '1' });
  }
  const ms = rc.bodies.deadlineMs(length);
  const chunks: Buffer[] = [];
  let late = false;
  // Read as a stream is iterated, which also ends at once for a request whose client went away before its handler
  // ran (a fault's latency, say): listeners added then would wait for events already gone.
  const read = (async () => {
    for await (const chunk of rc.req) if (!late) chunks.push(chunk as Buffer);
  })();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // What arrived is dropped, and what still comes is not kept: the answer closes the connection.
      late = true;
      chunks.length = 0;
      rc.res.setHeader('connection', 'close');
      reject(new EmulatorError('API_BODY_TIMEOUT', { reason: `a body of ${length} bytes must arrive within ${ms / 1000} s.` }));
    }, ms);
  });
  read.catch(() => {});
  try {
    await Promise.race([read, deadline]);
  } finally {
    clearTimeout(timer);
    release();
  }
  return (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8');
}

/** Parses JSON text, API_BAD_BODY when malformed. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new EmulatorError('API_BAD_BODY', { reason: `malformed JSON (${(err as Error).message}).` });
  }
}

/** Parses the JSON object body; an empty body counts as `{}` only where the operation takes no fields. */
export async function readJson(rc: RequestContext, opts: { emptyIsObject?: boolean } = {}): Promise<JsonObject> {
  const text = await readText(rc);
  if (text.trim() === '' && opts.emptyIsObject) return {};
  const value = parseJson(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    fail('API_BAD_BODY', { reason: 'expected a JSON object.' });
  checkJson(value);
  return value as JsonObject;
}

/**
 * Where text enters the emulator, the one check of what every store can keep: nesting at most MAX_JSON_DEPTH deep
 * (deeper overflows the stack when written back), and no NUL character in any string or name (PostgreSQL's text
 * cannot hold one, so SQLite alone would take it). Walked without recursion, so any depth is measured safely.
 */
export function checkJson(root: unknown): void {
  const stack: [unknown, number][] = [[root, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\0')) fail('API_BAD_BODY', { reason: 'text must not contain the NUL character (\\u0000).' });
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth > MAX_JSON_DEPTH) fail('API_BAD_BODY', { reason: `JSON nested more than ${MAX_JSON_DEPTH} levels deep.` });
    if (Array.isArray(value)) {
      for (const item of value) stack.push([item, depth + 1]);
    } else {
      for (const [key, item] of Object.entries(value)) {
        stack.push([key, depth]);
        stack.push([item, depth + 1]);
      }
    }
  }
}

// Field readers: a type mismatch is API_BAD_BODY, as a strict deserialiser would answer.

export function optString(body: JsonObject, field: string): string | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') fail('API_BAD_BODY', { reason: `${field} must be a string.` });
  return v;
}

export function reqString(body: JsonObject, field: string): string {
  const v = optString(body, field);
  if (v === undefined) fail('API_BAD_BODY', { reason: `${field} is required.` });
  return v;
}

export function optInteger(body: JsonObject, field: string): number | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) fail('API_BAD_BODY', { reason: `${field} must be an integer.` });
  return v;
}

export function reqInteger(body: JsonObject, field: string): number {
  const v = optInteger(body, field);
  if (v === undefined) fail('API_BAD_BODY', { reason: `${field} is required.` });
  return v;
}

export function optBoolean(body: JsonObject, field: string): boolean | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') fail('API_BAD_BODY', { reason: `${field} must be a boolean.` });
  return v;
}

export function optObject(body: JsonObject, field: string): JsonObject | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) fail('API_BAD_BODY', { reason: `${field} must be an object.` });
  return v as JsonObject;
}

export function optEnum<T extends string>(body: JsonObject, field: string, allowed: readonly T[]): T | undefined {
  const v = optString(body, field);
  if (v === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(v))
    fail('API_BAD_BODY', { reason: `${field} must be one of ${allowed.join(', ')}; got "${v}".` });
  return v as T;
}

/** Base URL for links the client follows next (presigned URLs): the Host it used to reach us, on our scheme. */
export function origin(rc: RequestContext): string {
  const host = rc.req.headers.host;
  const scheme = rc.endpoint.startsWith('https:') ? 'https' : 'http';
  return host && /^[A-Za-z0-9.\-:[\]]+$/.test(host) ? `${scheme}://${host}` : rc.endpoint;
}

/** The Authorization header as sent, for the auth service. */
export function authorization(rc: RequestContext): string | undefined {
  return rc.req.headers.authorization;
}

export function optStringList(body: JsonObject, field: string): string[] | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || !v.every((item) => typeof item === 'string')) fail('API_BAD_BODY', { reason: `${field} must be a list of strings.` });
  return v as string[];
}

/** The client's address, for the per-IP limits. */
export function clientAddress(rc: RequestContext): string {
  return rc.req.socket.remoteAddress ?? '';
}

/** A boolean query flag: absent is false; anything but true or false is API_BAD_QUERY_PARAMETER. */
export function queryFlag(rc: RequestContext, name: string): boolean {
  const flag = rc.query.get(name);
  if (flag !== null && flag !== 'true' && flag !== 'false')
    fail('API_BAD_QUERY_PARAMETER', { name, reason: 'expected true or false.' });
  return flag === 'true';
}
