// The external verification call of find, join and create (SERVICE-FACTS "Versions, namespaces…" §1): a POST of
// production's body to the game mode's configured URL with exactly its headers; any 2xx allows, anything else refuses.
// The URL is the developer's, called from the emulator's host: redirects are never followed, the answer is not read
// past a few bytes, and a loopback or private address is refused as production's validation refuses it, unless the
// emulator was started with verificationLoopback (a local emulator verifying against a server on the same host): an
// address written in the URL before the call, a name's addresses as the connection is made (publicLookup).
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import type { Dispatcher } from 'undici';
import { fail } from '../errors.js';
import type { LobbyRow } from '../stores/store.js';
import { lobbyGroupUuid, regionUuid } from './ids.js';
import type { EmulatorConfig } from '../config.js';
import type { Game } from './games.js';
import type { GameModeConfig, VerificationConfig } from './version-config.js';

/** Production's timeout of the call; a call past it counts as a 408 answer. */
export const VERIFICATION_TIMEOUT_MS = 10_000;
/** The answer's body is ignored: read at most this much of it, so the connection can be reused or dropped. */
const ANSWER_READ_BYTES = 4096;

/** What a find, join or create tells the verification server (production's `game` and its siblings). */
export interface VerificationRequest {
  kind: 'Find' | 'Join' | 'Create';
  namespaceId: string;
  gameMode: string;
  verificationData: unknown;
  /** Join: the lobby joined. */
  lobby: LobbyRow | null;
  /** Create: its lobby_config. */
  lobbyConfig: unknown;
  /** Find and create: the tags asked for. */
  tags: Record<string, string>;
  dynamicMaxPlayers: number | null;
  clientIp: string;
  userAgent: string | null;
}

/** Production's JSON body, field for field. */
export function verificationBody(r: VerificationRequest): Record<string, unknown> {
  const lobby = r.lobby;
  return {
    verification_data: r.verificationData ?? null,
    game: {
      namespace_id: r.namespaceId,
      game_mode_id: lobbyGroupUuid(r.gameMode),
      game_mode_name_id: r.gameMode,
      lobby:
        lobby === null
          ? null
          : {
              lobby_id: lobby.lobby_id,
              region_id: regionUuid(lobby.region_id),
              region_name_id: lobby.region_id,
              create_ts: new Date(lobby.create_ts).toISOString(),
              is_closed: lobby.is_closed === 1,
            },
      state: lobby?.state === null || lobby === null ? null : (JSON.parse(lobby.state) as unknown),
      config: r.lobbyConfig ?? null,
      tags: r.tags,
      dynamic_max_players: r.dynamicMaxPlayers,
    },
    clients: { [r.clientIp]: { user_agent: r.userAgent, latitude: null, longitude: null } },
    join_kind: 'Normal',
    kind: r.kind,
  };
}

/**
 * Calls each configured verification (find: one game mode's, or every listed one's), in order: a non-2xx answer is
 * MATCHMAKER_VERIFICATION_FAILED, a call that reached no server MATCHMAKER_VERIFICATION_REQUEST_FAILED.
 */
export async function verify(
  configs: VerificationConfig[],
  body: Record<string, unknown>,
  opts: { allowLoopback: boolean; timeoutMs?: number; lookup?: LookupFunction },
): Promise<void> {
  for (const config of configs) {
    if (!opts.allowLoopback && !publicUrl(config.url)) fail('MATCHMAKER_VERIFICATION_REQUEST_FAILED');
    const status = await call(config, body, opts.timeoutMs ?? VERIFICATION_TIMEOUT_MS, await dispatcher(opts.allowLoopback, opts.lookup ?? dns.lookup));
    if (status < 200 || status > 299) fail('MATCHMAKER_VERIFICATION_FAILED');
  }
}

/**
 * The verification call of each game mode's action, where its version configures one (production's order: each
 * listed game mode in turn); a create's creator then joins without the join's call.
 */
export async function verifyAction(
  config: Pick<EmulatorConfig, 'verificationLoopback'>,
  game: Pick<Game, 'namespaceId'>,
  action: 'find' | 'join' | 'create',
  gameModes: GameModeConfig[],
  clientIp: string,
  request: { verificationData?: unknown; userAgent?: string | null },
  what: Pick<VerificationRequest, 'lobby' | 'lobbyConfig' | 'tags' | 'dynamicMaxPlayers'>,
): Promise<void> {
  const kind = ({ find: 'Find', join: 'Join', create: 'Create' } as const)[action];
  for (const gm of gameModes) {
    const verification = gm.actions?.[action]?.verification;
    if (verification === null || verification === undefined) continue;
    const body = verificationBody({ ...what, kind, namespaceId: game.namespaceId, gameMode: gm.nameId, verificationData: request.verificationData, clientIp, userAgent: request.userAgent ?? null });
    await verify([verification], body, { allowLoopback: config.verificationLoopback });
  }
}

/** One connection pool per way of resolving names: public addresses only, or (verificationLoopback) any. */
const dispatchers = new Map<string, Map<LookupFunction, Dispatcher>>();

async function dispatcher(allowLoopback: boolean, lookup: LookupFunction): Promise<Dispatcher> {
  // Loaded on the first call only: undici installs its dispatcher as the process's global one (fetch's) when loaded,
  // which an emulator whose versions verify nothing has no need to change.
  const { Agent } = await import('undici');
  const key = allowLoopback ? 'any' : 'public';
  const byLookup = dispatchers.get(key) ?? dispatchers.set(key, new Map()).get(key)!;
  let agent = byLookup.get(lookup);
  if (agent === undefined) byLookup.set(lookup, (agent = new Agent({ connect: { lookup: allowLoopback ? lookup : publicLookup(lookup) } })));
  return agent;
}

/**
 * Resolves a name as `lookup` does, and fails the connection when any of its addresses is not public: checked as
 * the connection is made, with the addresses it is made to, so a name that answers a public address to a first look
 * and a private one to the next (DNS rebinding) gains nothing.
 */
export function publicLookup(lookup: LookupFunction): LookupFunction {
  return (hostname, options, callback) =>
    lookup(hostname, options, (err, address, family) => {
      if (err) return callback(err, address, family);
      const all = typeof address === 'string' ? [{ address, family: family ?? 4 }] : address;
      const refused = all.find((a) => !globallyRoutable(a.family === 6 ? `[${a.address}]` : a.address));
      if (refused === undefined) return callback(null, address, family);
      const error: NodeJS.ErrnoException = new Error(`${hostname} resolves to ${refused.address}, which is not a public address`);
      error.code = 'ENOTPUBLIC';
      callback(error, address, family);
    });
}

async function call(config: VerificationConfig, body: Record<string, unknown>, timeoutMs: number, dispatcher: Dispatcher): Promise<number> {
  const signal = AbortSignal.timeout(timeoutMs);
  const { request } = await import('undici');
  try {
    // Exactly the configured headers (no content-type added, as production); undici follows no redirect by default.
    const res = await request(config.url, { method: 'POST', headers: config.headers, body: JSON.stringify(body), signal, dispatcher });
    let read = 0;
    for await (const chunk of res.body) {
      read += (chunk as Buffer).length;
      if (read >= ANSWER_READ_BYTES) {
        res.body.destroy();
        break;
      }
    }
    return res.statusCode;
  } catch (err) {
    // A timeout is an answer (408), as production counts it; anything else reached no server.
    if (signal.aborted) return 408;
    void err;
    return fail('MATCHMAKER_VERIFICATION_REQUEST_FAILED');
  }
}

/** Production's rule for the URL's host (version-validate.ts checks it the same way when a version is created). */
function publicUrl(text: string): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  const host = url.hostname;
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local')) return false;
  return !isIpHost(host) || globallyRoutable(host);
}

export const isIpHost = (host: string): boolean => /^\d+\.\d+\.\d+\.\d+$/.test(host) || host.startsWith('[');

/** Whether an IP address is one the public internet routes: not loopback, private, link-local, shared or reserved. */
export function globallyRoutable(host: string): boolean {
  if (host.startsWith('[')) {
    const h = host.slice(1, -1).toLowerCase();
    // ::/96 and its neighbours (unspecified, loopback, IPv4-mapped and -compatible), unique local, link- and
    // site-local, multicast, NAT64's well-known prefix (it reaches IPv4 addresses), documentation.
    return !(h.startsWith('::') || /^f[cd]/.test(h) || /^fe[89a-f]/.test(h) || h.startsWith('ff') || h.startsWith('64:ff9b:') || h.startsWith('2001:db8'));
  }
  const [a, b] = host.split('.').map(Number) as [number, number];
  return !(a === 0 || a === 10 || a === 127 || (a === 100 && b >= 64 && b < 128) || (a === 169 && b === 254) || (a === 172 && b >= 16 && b < 32) || (a === 192 && b === 168) || (a === 198 && (b === 18 || b === 19)) || a >= 224);
}
