// The HTTP front: routing, path parameters, ray ids, and turning every failure into the JSON error body.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { ERRORS, EmulatorError, errorBody, fail, type ErrorCode, type ErrorParams } from '../errors.js';
import type { Faults } from '../faults.js';
import { MAX_PARTS } from '../services/builds.js';
import { GAME_ID, NAMESPACE_ID, isUuid } from '../services/ids.js';
import type { Services } from '../services/index.js';
import type { InternalErrors } from '../operator-log.js';
import { BodyBudget } from './bodies.js';
import { adminDeleteBuild, adminListBuilds, completeUpload, createBuild, listGameBuilds, putPart } from './builds.js';
import type { Handler, Reply, RequestContext } from './context.js';
import { injectFault } from './faults.js';
import { adminCreateGame, adminDeleteGame, adminListGames, getGame, inspect } from './games.js';
import { downloadExport, exportHistory } from './history.js';
import { downloadLogExport, exportLobbyLogs, getLobbyLogLines } from './logs.js';
import { getRegionTiers } from './tiers.js';
import {
  createDevelopmentToken,
  createNamespace,
  createPublicToken,
  getNamespace,
  namespaceVersionHistory,
  setNamespaceMatchmakerConfig,
  setNamespaceVersion,
  validateNamespaceMatchmakerConfig,
} from './namespaces.js';
import { createGameVersion, getGameVersion, reserveVersionName, validateGameVersion } from './versions.js';
import {
  adminJoinLobby,
  adminLobbyEnv,
  adminStopLobby,
  createLobby,
  findLobby,
  getLobbyLogs,
  getLobbyState,
  joinLobby,
  listLobbies,
  listNamespaceLobbies,
  deleteLobby,
  listRegions,
  lobbyClosed,
  lobbyReady,
  playerConnected,
  playerDisconnected,
  playerStatistics,
  setLobbyState,
} from './lobbies.js';

/** What the front needs beside the services. */
export interface Front {
  /** Set once listening; presigned URLs use the request's Host first, this as a fallback. */
  endpoint: string;
  /** Injected failures, when asked for (`--faults`, GAMEHOST_EMULATOR_FAULTS). */
  faults?: Faults;
  /** The listener containers call: the lobby routes alone, every other path 403 whatever token comes with it. */
  lobbyRoutesOnly?: boolean;
  /** The containers' subnet (CIDR): requests from it get the lobby routes alone on this listener too. */
  containerSubnet?: string;
  /**
   * Set as the emulator closes its listener: each answer then ends its connection, so a keep-alive client's next
   * request finds the listener gone instead of being served on the old connection through the grace period.
   */
  closing?: boolean;
}

/** A certificate chain and its key, PEM: the server answers HTTPS. */
export interface TlsPair {
  cert: Buffer;
  key: Buffer;
}

interface Route {
  method: string;
  segments: string[];
  handler: Handler;
  /** Behind the admin token (when the emulator has one): decided here, by the route, never by the path's spelling. */
  admin: boolean;
  /** A lobby token's route (its server's calls): the only routes a container is served. */
  lobby: boolean;
}

function route(method: string, pattern: string, handler: Handler, opts: { admin?: boolean; lobby?: boolean } = {}): Route {
  return { method, segments: pattern.split('/').slice(1), handler, admin: opts.admin ?? false, lobby: opts.lobby ?? false };
}

const admin = { admin: true };
const lobby = { lobby: true };

const ROUTES: Route[] = [
  route('POST', '/matchmaker/lobbies/create', createLobby),
  route('POST', '/matchmaker/lobbies/find', findLobby),
  route('POST', '/matchmaker/lobbies/join', joinLobby),
  route('GET', '/matchmaker/lobbies/list', listLobbies),
  route('GET', '/matchmaker/regions', listRegions),
  route('POST', '/matchmaker/lobbies/ready', lobbyReady, lobby),
  route('PUT', '/matchmaker/lobbies/closed', lobbyClosed, lobby),
  route('PUT', '/matchmaker/lobbies/state', setLobbyState, lobby),
  route('GET', '/matchmaker/lobbies/:lobby_id/state', getLobbyState, lobby),
  route('POST', '/matchmaker/players/connected', playerConnected, lobby),
  route('POST', '/matchmaker/players/disconnected', playerDisconnected, lobby),
  route('GET', '/matchmaker/players/statistics', playerStatistics),
  route('GET', '/cloud/auth/inspect', inspect),
  route('GET', '/cloud/games/:game_id', getGame),
  route('POST', '/cloud/games/:game_id/versions/validate', validateGameVersion),
  route('POST', '/cloud/games/:game_id/versions/reserve-name', reserveVersionName),
  route('POST', '/cloud/games/:game_id/versions', createGameVersion),
  route('GET', '/cloud/games/:game_id/versions/:version_id', getGameVersion),
  route('GET', '/cloud/region-tiers', getRegionTiers),
  route('GET', '/cloud/games/:game_id/namespaces/:namespace_id/logs/lobbies/:lobby_id', getLobbyLogs),
  route('POST', '/cloud/games/:game_id/matchmaker/lobbies/export-history', exportHistory),
  route('GET', '/cloud/games/:game_id/matchmaker/lobbies/:lobby_id/logs', getLobbyLogLines),
  route('POST', '/cloud/games/:game_id/matchmaker/lobbies/:lobby_id/logs/export', exportLobbyLogs),
  route('POST', '/cloud/games/:game_id/namespaces', createNamespace),
  route('GET', '/cloud/games/:game_id/namespaces/:namespace_id', getNamespace),
  route('PUT', '/cloud/games/:game_id/namespaces/:namespace_id/version', setNamespaceVersion),
  route('GET', '/cloud/games/:game_id/namespaces/:namespace_id/version-history', namespaceVersionHistory),
  route('POST', '/cloud/games/:game_id/namespaces/:namespace_id/mm-config', setNamespaceMatchmakerConfig),
  route('POST', '/cloud/games/:game_id/namespaces/:namespace_id/mm-config/validate', validateNamespaceMatchmakerConfig),
  route('POST', '/cloud/games/:game_id/namespaces/:namespace_id/tokens/public', createPublicToken),
  route('POST', '/cloud/games/:game_id/namespaces/:namespace_id/tokens/development', createDevelopmentToken),
  route('POST', '/cloud/games/:game_id/builds', createBuild),
  route('GET', '/cloud/games/:game_id/builds', listGameBuilds),
  route('DELETE', '/cloud/games/:game_id/matchmaker/lobbies/:lobby_id', deleteLobby),
  route('GET', '/cloud/games/:game_id/namespaces/:namespace_id/logs/lobbies', listNamespaceLobbies),
  route('POST', '/cloud/uploads/:upload_id/complete', completeUpload),
  // Presigned targets, standing in for the object store.
  route('PUT', '/_upload/:upload_id/:part_number', putPart),
  route('GET', '/_export/:export_id/export.csv', downloadExport),
  route('GET', '/_export/:export_id/stdout.txt', downloadLogExport),
  route('GET', '/_export/:export_id/stderr.txt', downloadLogExport),
  // Admin routes for tests and `gamehost emulator ...`: the admin token when one is set.
  route('POST', '/_emulator/games', adminCreateGame, admin),
  route('GET', '/_emulator/games', adminListGames, admin),
  route('DELETE', '/_emulator/games/:game_id', adminDeleteGame, admin),
  route('POST', '/_emulator/lobbies/:lobby_id/stop', adminStopLobby, admin),
  route('POST', '/_emulator/lobbies/:lobby_id/players', adminJoinLobby, admin),
  route('GET', '/_emulator/builds', adminListBuilds, admin),
  route('DELETE', '/_emulator/builds/:build_id', adminDeleteBuild, admin),
  route('GET', '/_emulator/lobbies/:lobby_id/env', adminLobbyEnv, admin),
  // Health answers load balancers and container checks, which hold no token; it tells nothing secret.
  route('GET', '/_emulator/health', health),
];

/** Every route as the front knows it (method, path pattern, whether admin or a lobby token's): for tests that try them all. */
export const ROUTE_TABLE: readonly { method: string; path: string; admin: boolean; lobby: boolean }[] = ROUTES.map((r) => ({
  method: r.method,
  path: `/${r.segments.join('/')}`,
  admin: r.admin,
  lobby: r.lobby,
}));

/** 200 when the store and the bucket answer; 503 naming the one that does not, for load balancers and probes. */
async function health(rc: RequestContext): Promise<Reply> {
  const report = await rc.services.health.check();
  if (report.ok) return { status: 200, json: { ok: true, game_id: GAME_ID, namespace_id: NAMESPACE_ID } };
  return {
    status: 503,
    json: { ok: false, unavailable: report.unavailable, message: `the ${report.unavailable} does not answer: ${report.reason}` },
  };
}

/** Decodes and checks one path parameter: `*_id` must be a UUID (lower-cased), `part_number` 1..MAX_PARTS. */
function pathParam(name: string, raw: string): string {
  let value: string;
  try {
    value = decodeURIComponent(raw);
  } catch {
    fail('API_BAD_PATH_PARAMETER', { name, reason: 'bad percent-encoding.' });
  }
  if (name === 'part_number') {
    if (!/^\d{1,5}$/.test(value) || Number(value) < 1 || Number(value) > MAX_PARTS)
      fail('API_BAD_PATH_PARAMETER', { name, reason: `expected a part number from 1 to ${MAX_PARTS}.` });
    return String(Number(value));
  }
  if (!isUuid(value)) fail('API_BAD_PATH_PARAMETER', { name, reason: `"${value}" is not a UUID.` });
  return value.toLowerCase();
}

function matches(route: Route, segments: string[]): boolean {
  if (route.segments.length !== segments.length) return false;
  return route.segments.every((want, i) => want.startsWith(':') || want === segments[i]);
}

/**
 * The route for the request, its path parameters set; the admin token is checked as soon as the path names an
 * admin route, before anything else about the request is told (a wrong method, a bad parameter).
 */
function resolve(rc: RequestContext, lobbyRoutesOnly: boolean): Handler {
  const segments = rc.path.split('/').slice(1);
  const allowed: string[] = [];
  let guarded = false;
  // A container is served its lobby's routes and nothing else: no admin route (even with the admin token, even where
  // serve trusts its own loopback), no cloud route, no matchmaker route of a client; every other path is 403, told
  // before anything about it.
  if (lobbyRoutesOnly && !ROUTES.some((r) => r.lobby && matches(r, segments)))
    fail('API_FORBIDDEN', { reason: 'a lobby\'s server is served the lobby routes only (ready, closed, state, players connected and disconnected).' });
  for (const r of ROUTES) {
    if (!matches(r, segments)) continue;
    if (r.admin && !guarded) {
      rc.services.admin.check(rc.req.headers.authorization, rc.req.socket.remoteAddress ?? '');
      guarded = true;
    }
    if (r.method !== rc.method) {
      allowed.push(r.method);
      continue;
    }
    r.segments.forEach((want, i) => {
      if (want.startsWith(':')) rc.params[want.slice(1)] = pathParam(want.slice(1), segments[i]!);
    });
    return r.handler;
  }
  if (allowed.length > 0) {
    throw new EmulatorError('API_METHOD_NOT_ALLOWED', { method: rc.method, allow: allowed.join(', ') }, undefined, {
      allow: allowed.join(', '),
    });
  }
  fail('API_NOT_FOUND', { what: `Route ${rc.method} ${rc.path}` });
}

function send(res: ServerResponse, reply: Reply): void {
  if (reply.headers) for (const [k, v] of Object.entries(reply.headers)) res.setHeader(k, v);
  let body: string | Buffer = '';
  if (reply.json !== undefined) {
    body = JSON.stringify(reply.json);
    res.setHeader('content-type', 'application/json; charset=utf-8');
  } else if (reply.body !== undefined) {
    body = reply.body;
  }
  res.setHeader('content-length', Buffer.byteLength(body));
  res.statusCode = reply.status;
  res.end(body);
}

function sendError(
  rc: RequestContext,
  code: ErrorCode,
  params: ErrorParams,
  metadata?: unknown,
  headers?: Record<string, string>,
): void {
  const { res } = rc;
  if (res.headersSent) {
    res.destroy();
    return;
  }
  send(res, { status: ERRORS[code].status, json: errorBody(code, params, rc.rayId, metadata), headers: headers ?? {} });
}

async function handle(services: Services, front: Front, bodies: BodyBudget, internal: InternalErrors, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const rayId = randomUUID();
  res.setHeader('rvt-ray-id', rayId);
  const url = req.url ?? '';
  const q = url.indexOf('?');
  const rc: RequestContext = {
    services,
    req,
    res,
    method: req.method ?? 'GET',
    path: q === -1 ? url : url.slice(0, q),
    query: new URLSearchParams(q === -1 ? '' : url.slice(q + 1)),
    params: {},
    rayId,
    endpoint: front.endpoint,
    bodies,
  };
  try {
    // Only origin-form (`/path?query`): `*`, `*/…` and absolute-form name no route the service has, and are refused
    // before any route is looked at.
    if (!url.startsWith('/')) {
      res.setHeader('connection', 'close');
      fail('API_BAD_REQUEST_TARGET');
    }
    const handler = resolve(rc, front.lobbyRoutesOnly === true || (front.containerSubnet !== undefined && inSubnet(req.socket.remoteAddress ?? '', front.containerSubnet)));
    if (front.faults && (await injectFault(front.faults, rc))) return;
    const reply = await handler(rc);
    if (front.closing) res.setHeader('connection', 'close');
    send(res, reply);
  } catch (err) {
    if (front.closing && !res.headersSent) res.setHeader('connection', 'close');
    if (err instanceof EmulatorError) {
      sendError(rc, err.code, err.params, err.metadata, err.headers);
    } else {
      // A request whose client has gone (its connection closed while it was read or served) has nobody to answer,
      // and what it failed on says nothing of the service.
      if (!res.destroyed && !req.socket.destroyed) internal.tell(`ray ${rayId}`, err);
      sendError(rc, 'ERROR', {});
    }
  }
}

/** Whether an IPv4 address (or one mapped into IPv6, as a dual-stack listener sees it) is in a subnet such as 172.18.0.0/16. */
export function inSubnet(address: string, cidr: string): boolean {
  const ipv4 = (text: string): number | undefined => {
    const m = /^(?:::ffff:)?(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/i.exec(text);
    if (!m) return undefined;
    const parts = m.slice(1).map(Number);
    return parts.some((p) => p > 255) ? undefined : ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
  };
  const [base, bits] = cidr.split('/');
  const a = ipv4(address);
  const b = ipv4(base ?? '');
  const n = Number(bits);
  if (a === undefined || b === undefined || bits === undefined || !Number.isInteger(n) || n < 0 || n > 32) return false;
  const mask = n === 0 ? 0 : (~0 << (32 - n)) >>> 0;
  return ((a & mask) >>> 0) === ((b & mask) >>> 0);
}

/** HTTP, or HTTPS with `tls` (its certificate replaceable while serving: `server.setSecureContext`). */
export function createEmulatorServer(services: Services, front: Front, internal: InternalErrors, tls?: TlsPair): Server {
  const bodies = new BodyBudget();
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    // handle() never rejects, but a last guard keeps one bad request from ending the process.
    handle(services, front, bodies, internal, req, res).catch(() => res.destroy());
  };
  const server = tls ? createTlsServer({ cert: tls.cert, key: tls.key }, listener) : createServer(listener);
  server.keepAliveTimeout = 5_000;
  // A request's headers arrive in one go from any client; a connection that trickles them is closed after 20 s
  // (Node's default is 60 s), so idle half-requests hold little for long. Bodies have their own bounds (bodies.ts).
  server.headersTimeout = 20_000;
  return server;
}
