// A version's configuration as production reads it (SERVICE-FACTS "Versions, namespaces, idle lobbies, tiers and
// deploy", §1): the cloud API's config, game modes keyed by name, each with what it leaves out inherited from
// `matchmaker.*`, then production's defaults. Wrong JSON types are API_BAD_BODY; a negative number is
// MATCHMAKER_INVALID_VERSION_CONFIG, as production's conversion answers before it validates (version-validate.ts).
import { fail } from '../errors.js';
import { DEFAULT_TIER } from './tiers.js';

export type JsonObject = Record<string, unknown>;

const DEFAULT_MAX_PLAYERS = 32;

const PROTOCOLS = ['http', 'https', 'tcp', 'tcp_tls', 'udp'] as const;
export type Protocol = (typeof PROTOCOLS)[number];
const PROXIES = ['none', 'game_guard'] as const;
const NETWORK_MODES = ['bridge', 'host'] as const;

export interface PortConfig {
  label: string;
  port: number | null;
  portRange: { min: number; max: number } | null;
  protocol: Protocol;
  proxy: (typeof PROXIES)[number];
}

export interface DockerConfig {
  imageId: string | null;
  args: string[];
  env: Record<string, string>;
  networkMode: (typeof NETWORK_MODES)[number];
  ports: PortConfig[];
}

export interface VerificationConfig {
  url: string;
  headers: Record<string, string>;
}

/** One action of a game mode (find, join, create): allowed or not, who may call it, and the call that verifies it. */
export interface ActionConfig {
  enabled: boolean;
  identityRequirement: (typeof IDENTITY_REQUIREMENTS)[number];
  verification: VerificationConfig | null;
}

export interface ActionsConfig {
  find: ActionConfig | null;
  join: ActionConfig | null;
  create: (ActionConfig & { enablePublic: boolean; enablePrivate: boolean; maxLobbiesPerIdentity: number | null }) | null;
}

const IDENTITY_REQUIREMENTS = ['none', 'guest', 'registered'] as const;

export interface RegionConfig {
  /** The region's name id, or its position in the config's map when the game has no such region. */
  nameId: string;
  known: boolean;
  tier: string;
  idleLobbies: { min: number; max: number };
}

/** A game mode with everything inherited and defaulted. */
export interface GameModeConfig {
  nameId: string;
  regions: RegionConfig[];
  maxPlayers: number;
  maxPlayersDirect: number;
  maxPlayersParty: number;
  docker: DockerConfig | null;
  listable: boolean;
  taggable: boolean;
  allowDynamicMaxPlayers: boolean;
  actions: ActionsConfig | null;
}

export interface CaptchaConfig {
  requestsBeforeReverify: number;
  verificationTtl: number;
  hcaptcha: { siteKey: string | null; secretKey: string | null } | null;
  turnstile: { siteKey: string; secretKey: string } | null;
}

export interface MatchmakerConfig {
  gameModes: GameModeConfig[];
  captcha: CaptchaConfig | null;
}


// Readers: a wrong type is the request's fault (400 API_BAD_BODY, naming the field); a negative number is
// production's conversion error.
const bad = (at: string, what: string): never => fail('API_BAD_BODY', { reason: `${at} must be ${what}.` });

export function object(v: unknown, at: string): JsonObject | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) bad(at, 'an object');
  return v as JsonObject;
}

function string(v: unknown, at: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') bad(at, 'a string');
  return v as string;
}

function boolean(v: unknown, at: string): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') bad(at, 'true or false');
  return v as boolean;
}

/** A count: an integer, and not negative (production's `<field>` out of bounds). */
function count(v: unknown, at: string, field: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) bad(at, 'an integer');
  if ((v as number) < 0) fail('MATCHMAKER_INVALID_VERSION_CONFIG', { field });
  return v as number;
}

function oneOf<T extends string>(v: unknown, at: string, allowed: readonly T[]): T | undefined {
  const s = string(v, at);
  if (s !== undefined && !(allowed as readonly string[]).includes(s)) bad(at, `one of ${allowed.join(', ')}`);
  return s as T | undefined;
}

function strings(v: unknown, at: string): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || !v.every((s) => typeof s === 'string')) bad(at, 'a list of strings');
  return v as string[];
}

function stringMap(v: unknown, at: string): Record<string, string> | undefined {
  const o = object(v, at);
  if (o === undefined) return undefined;
  for (const [k, s] of Object.entries(o)) if (typeof s !== 'string') bad(`${at}.${k}`, 'a string');
  return o as Record<string, string>;
}

function idleLobbies(v: unknown, at: string): { min: number; max: number } | undefined {
  const o = object(v, at);
  if (o === undefined) return undefined;
  return { min: count(o.min, `${at}.min`, 'idle_lobbies.min') ?? bad(`${at}.min`, 'an integer'), max: count(o.max, `${at}.max`, 'idle_lobbies.max') ?? bad(`${at}.max`, 'an integer') };
}

function ports(v: unknown, at: string): PortConfig[] {
  const o = object(v, at) ?? {};
  return Object.entries(o).map(([label, raw]) => {
    const p = object(raw, `${at}.${label}`) ?? {};
    const range = object(p.port_range, `${at}.${label}.port_range`);
    return {
      label,
      port: count(p.port, `${at}.${label}.port`, 'port') ?? null,
      portRange: range
        ? { min: count(range.min, `${at}.${label}.port_range.min`, 'port_range.min') ?? bad(`${at}.${label}.port_range.min`, 'an integer'), max: count(range.max, `${at}.${label}.port_range.max`, 'port_range.max') ?? bad(`${at}.${label}.port_range.max`, 'an integer') }
        : null,
      protocol: oneOf(p.protocol, `${at}.${label}.protocol`, PROTOCOLS) ?? 'https',
      proxy: oneOf(p.proxy, `${at}.${label}.proxy`, PROXIES) ?? 'game_guard',
    };
  });
}

function verification(v: unknown, at: string): VerificationConfig | null {
  const o = object(v, at);
  if (o === undefined) return null;
  return { url: string(o.url, `${at}.url`) ?? bad(`${at}.url`, 'a string'), headers: stringMap(o.headers, `${at}.headers`) ?? {} };
}

function action(v: unknown, at: string): ActionConfig | null {
  const o = object(v, at);
  if (o === undefined) return null;
  return {
    enabled: boolean(o.enabled, `${at}.enabled`) ?? true,
    identityRequirement: oneOf(o.identity_requirement, `${at}.identity_requirement`, IDENTITY_REQUIREMENTS) ?? 'none',
    verification: verification(o.verification, `${at}.verification`),
  };
}

function actions(v: unknown, at: string): ActionsConfig | null {
  const o = object(v, at);
  if (o === undefined) return null;
  const create = action(o.create, `${at}.create`);
  const c = object(o.create, `${at}.create`);
  return {
    find: action(o.find, `${at}.find`),
    join: action(o.join, `${at}.join`),
    // (server) a present create block enables creates whatever its `enabled` says.
    create:
      create && c
        ? {
            ...create,
            enabled: true,
            enablePublic: boolean(c.enable_public, `${at}.create.enable_public`) ?? false,
            enablePrivate: boolean(c.enable_private, `${at}.create.enable_private`) ?? true,
            maxLobbiesPerIdentity: count(c.max_lobbies_per_identity, `${at}.create.max_lobbies_per_identity`, 'actions.create.max_lobbies_per_identity') ?? null,
          }
        : null,
  };
}

/**
 * The game modes of a config, each with what it leaves out taken from `matchmaker.*`, then from production's
 * defaults. Undefined when the config has no matchmaker.
 */
/**
 * `regions`: the game's, what a game mode naming none runs in; `known`: every region a version may name (the game's
 * and production's; default the game's).
 */
export function readMatchmaker(config: JsonObject, ctx: { regions: readonly string[]; known?: readonly string[] }): MatchmakerConfig | undefined {
  const mm = object(config.matchmaker, 'config.matchmaker');
  if (mm === undefined) return undefined;
  if (mm.lobby_groups !== undefined && mm.lobby_groups !== null) bad('config.matchmaker.lobby_groups', 'left out (deprecated: the emulator reads game_modes only)');
  const at = 'config.matchmaker';
  const top = {
    regions: object(mm.regions, `${at}.regions`),
    maxPlayers: count(mm.max_players, `${at}.max_players`, 'max_players'),
    maxPlayersDirect: count(mm.max_players_direct, `${at}.max_players_direct`, 'max_players_direct'),
    maxPlayersParty: count(mm.max_players_party, `${at}.max_players_party`, 'max_players_party'),
    docker: object(mm.docker, `${at}.docker`),
    tier: string(mm.tier, `${at}.tier`),
    idleLobbies: idleLobbies(mm.idle_lobbies, `${at}.idle_lobbies`),
  };
  const gameModes = Object.entries(object(mm.game_modes, `${at}.game_modes`) ?? {}).map(([nameId, raw]): GameModeConfig => {
    const gat = `${at}.game_modes.${nameId}`;
    const gm = object(raw, gat) ?? {};
    const tier = string(gm.tier, `${gat}.tier`) ?? top.tier ?? DEFAULT_TIER;
    const idle = idleLobbies(gm.idle_lobbies, `${gat}.idle_lobbies`) ?? top.idleLobbies ?? { min: 0, max: 0 };
    // No regions, or an empty map: every region of the game.
    const regionMap = object(gm.regions, `${gat}.regions`) ?? top.regions;
    const regionEntries = regionMap && Object.keys(regionMap).length > 0 ? Object.entries(regionMap) : ctx.regions.map((r) => [r, {}] as const);
    const regions = regionEntries.map(([name, r], i): RegionConfig => {
      const o = object(r, `${gat}.regions.${name}`) ?? {};
      const known = (ctx.known ?? ctx.regions).includes(name);
      return { nameId: known ? name : String(i), known, tier: string(o.tier, `${gat}.regions.${name}.tier`) ?? tier, idleLobbies: idleLobbies(o.idle_lobbies, `${gat}.regions.${name}.idle_lobbies`) ?? idle };
    });
    const maxPlayers = count(gm.max_players, `${gat}.max_players`, 'max_players') ?? top.maxPlayers ?? DEFAULT_MAX_PLAYERS;
    // The game mode's docker block replaces the top-level one, but for env, which is merged (the game mode's wins).
    const own = object(gm.docker, `${gat}.docker`);
    const docker = own ?? top.docker;
    const dat = own ? `${gat}.docker` : `${at}.docker`;
    return {
      nameId,
      regions,
      maxPlayers,
      maxPlayersDirect: count(gm.max_players_direct, `${gat}.max_players_direct`, 'max_players_direct') ?? top.maxPlayersDirect ?? maxPlayers,
      maxPlayersParty: count(gm.max_players_party, `${gat}.max_players_party`, 'max_players_party') ?? top.maxPlayersParty ?? maxPlayers,
      docker: docker
        ? {
            imageId: string(docker.image_id, `${dat}.image_id`) ?? null,
            args: strings(docker.args, `${dat}.args`) ?? [],
            env: { ...stringMap(top.docker?.env, `${at}.docker.env`), ...(own ? stringMap(own.env, `${gat}.docker.env`) : {}) },
            networkMode: oneOf(docker.network_mode, `${dat}.network_mode`, NETWORK_MODES) ?? 'bridge',
            ports: ports(docker.ports, `${dat}.ports`),
          }
        : null,
      listable: boolean(gm.listable, `${gat}.listable`) ?? true,
      taggable: boolean(gm.taggable, `${gat}.taggable`) ?? false,
      allowDynamicMaxPlayers: boolean(gm.allow_dynamic_max_players, `${gat}.allow_dynamic_max_players`) ?? false,
      actions: actions(gm.actions, `${gat}.actions`),
    };
  });
  const captcha = object(mm.captcha, `${at}.captcha`);
  const hcaptcha = captcha && object(captcha.hcaptcha, `${at}.captcha.hcaptcha`);
  const turnstile = captcha && object(captcha.turnstile, `${at}.captcha.turnstile`);
  return {
    gameModes,
    captcha: captcha
      ? {
          requestsBeforeReverify: count(captcha.requests_before_reverify, `${at}.captcha.requests_before_reverify`, 'requests_before_reverify') ?? bad(`${at}.captcha.requests_before_reverify`, 'an integer'),
          verificationTtl: count(captcha.verification_ttl, `${at}.captcha.verification_ttl`, 'verification_ttl') ?? bad(`${at}.captcha.verification_ttl`, 'an integer'),
          hcaptcha: hcaptcha ? { siteKey: string(hcaptcha.site_key, `${at}.captcha.hcaptcha.site_key`) ?? null, secretKey: string(hcaptcha.secret_key, `${at}.captcha.hcaptcha.secret_key`) ?? null } : null,
          turnstile: turnstile
            ? { siteKey: string(turnstile.site_key, `${at}.captcha.turnstile.site_key`) ?? bad(`${at}.captcha.turnstile.site_key`, 'a string'), secretKey: string(turnstile.secret_key, `${at}.captcha.turnstile.secret_key`) ?? bad(`${at}.captcha.turnstile.secret_key`, 'a string') }
            : null,
        }
      : null,
  };
}
