// Production's validation of a version (game-version-validate): every error it finds in a display name and a
// config read as production reads it (version-config.ts), each a path of strings, in the order it finds them.
import { object, readMatchmaker, type CaptchaConfig, type DockerConfig, type GameModeConfig, type JsonObject, type Protocol, type VerificationConfig } from './version-config.js';
import { tierNamed } from './tiers.js';
import { globallyRoutable, isIpHost } from './verification.js';

/** The variables production gives every lobby: a version's env may not set them. */
const DEFAULT_ENV_KEYS = new Set([
  'RIVET_API_ENDPOINT',
  'RIVET_CHAT_API_URL',
  'RIVET_GROUP_API_URL',
  'RIVET_IDENTITY_API_URL',
  'RIVET_KV_API_URL',
  'RIVET_MATCHMAKER_API_URL',
  'RIVET_NAMESPACE_NAME',
  'RIVET_NAMESPACE_ID',
  'RIVET_VERSION_NAME',
  'RIVET_VERSION_ID',
  'RIVET_GAME_MODE_ID',
  'RIVET_GAME_MODE_NAME',
  'RIVET_LOBBY_ID',
  'RIVET_TOKEN',
  'RIVET_REGION_ID',
  'RIVET_REGION_NAME',
  'RIVET_MAX_PLAYERS_NORMAL',
  'RIVET_MAX_PLAYERS_DIRECT',
  'RIVET_MAX_PLAYERS_PARTY',
  'RIVET_LOBBY_TOKEN',
  'RIVET_LOBBY_GROUP_ID',
  'RIVET_LOBBY_GROUP_NAME',
]);

/** The host port ranges a `host` network game mode may ask for. */
const MIN_HOST_PORT = 26000;
const MAX_HOST_PORT = 31999;

/** What validation needs of the game beside the config. */
export interface VersionContext {
  /** The game's regions, by name id. */
  regions: readonly string[];
  /** Every region a version may name (the game's and production's); default the game's. */
  known?: readonly string[];
  /** A verification URL may name a loopback or private address (the emulator's verificationLoopback). */
  loopbackVerification?: boolean;
  /** The display names taken: the one asked for, when the game has a version of it. */
  displayNames: readonly string[];
}

export type ValidationPath = string[];

/** Production's identifier: lowercase letters, digits and single inner dashes, at most `max` characters. */
export const ident = (s: string, max = 16): boolean => s.length > 0 && s.length <= max && /^[0-9a-z-]+$/.test(s) && !s.includes('--') && !s.startsWith('-') && !s.endsWith('-');
/** A game mode's name: letters, digits, `_` and `-`, not starting or ending with `-`. */
const gameModeName = (s: string): boolean => /^[0-9a-zA-Z_-]{1,64}$/.test(s) && !s.startsWith('-') && !s.endsWith('-');
const bytes = (s: string): number => Buffer.byteLength(s);

/** A display name of at most 128 bytes, with single spaces between words and no other whitespace. */
function displayNameValid(s: string): boolean {
  if (s.length === 0 || bytes(s) > 128) return false;
  return !/[^\S ]/u.test(s) && !/^\s|\s$/u.test(s) && !/\s\s/u.test(s);
}

/** A display name's errors (a version's, a namespace's), `taken` the names it must not repeat. */
export function displayNameErrors(displayName: string, taken: readonly string[]): ValidationPath[] {
  const errors: ValidationPath[] = [];
  if (displayName.length === 0) errors.push(['display-name', 'too-short']);
  else if (bytes(displayName) > 128) errors.push(['display-name', 'too-long']);
  if (!displayNameValid(displayName)) errors.push(['display-name', 'invalid']);
  if (taken.includes(displayName)) errors.push(['display-name', 'not-unique']);
  return errors;
}

/** The errors production's validation finds in a version, in the order it finds them; none: it is valid. */
export function validateVersion(displayName: string, config: JsonObject, ctx: VersionContext): ValidationPath[] {
  const errors = displayNameErrors(displayName, ctx.displayNames);
  const cdn = object(config.cdn, 'config.cdn');
  if (cdn && (cdn.site_id === undefined || cdn.site_id === null)) errors.push(['config', 'cdn', 'no-site-id']);
  const mm = readMatchmaker(config, ctx);
  if (mm === undefined) {
    errors.push(['config', 'matchmaker', 'missing']);
    return errors;
  }
  if (mm.captcha) errors.push(...captchaErrors(mm.captcha));
  if (mm.gameModes.length === 0) errors.push(['config', 'matchmaker', 'game-modes-meta', 'too-few']);
  else if (mm.gameModes.length > 32) errors.push(['config', 'matchmaker', 'game-modes-meta', 'too-many']);
  for (const gm of mm.gameModes.slice(0, 32)) errors.push(...gameModeErrors(gm, ctx.loopbackVerification === true).map((p) => ['config', 'matchmaker', 'game-modes', `*${gm.nameId}*`, ...p]));
  return errors;
}

function captchaErrors(c: CaptchaConfig): ValidationPath[] {
  const at = ['config', 'matchmaker', 'captcha'];
  const errors: ValidationPath[] = [];
  if (c.requestsBeforeReverify > 600) errors.push([...at, 'requests-before-reverify', 'too-high']);
  if (c.verificationTtl > 12 * 3600 * 1000) errors.push([...at, 'verification-ttl', 'too-high']);
  if (!c.hcaptcha && !c.turnstile) errors.push(['config', 'matchmaker', 'captcha-meta', 'must-have-one']);
  const key = (kind: string, field: string, v: string | null, max: number) => {
    if (v === null) errors.push([...at, kind, field, 'required']);
    else if (v.length === 0) errors.push([...at, kind, field, 'too-short']);
    else if (bytes(v) > max) errors.push([...at, kind, field, 'too-long']);
  };
  if (c.hcaptcha) {
    key('hcaptcha', 'site-key', c.hcaptcha.siteKey, 36);
    key('hcaptcha', 'secret-key', c.hcaptcha.secretKey, 42);
  }
  if (c.turnstile) {
    key('turnstile', 'site-key', c.turnstile.siteKey, 30);
    key('turnstile', 'secret-key', c.turnstile.secretKey, 40);
  }
  return errors;
}

/** One game mode's errors, each path below `config.matchmaker.game-modes.*<name>*`. */
function gameModeErrors(gm: GameModeConfig, loopback: boolean): ValidationPath[] {
  const errors: ValidationPath[] = [];
  if (!gameModeName(gm.nameId)) errors.push(['name-id-invalid']);
  for (const [field, n] of [['max-players-normal', gm.maxPlayers], ['max-players-direct', gm.maxPlayersDirect], ['max-players-party', gm.maxPlayersParty]] as const) {
    if (n === 0) errors.push(['player-counts', field, 'too-low']);
    else if (n > 256) errors.push(['player-counts', field, 'too-high']);
  }
  for (const r of gm.regions.slice(0, 64)) {
    if (!r.known) {
      errors.push(['regions', r.nameId, 'invalid']);
      continue;
    }
    const at = ['regions', `*${r.nameId}*`];
    if (!ident(r.tier) || tierNamed(r.tier) === undefined) errors.push([...at, 'tier-name-id-invalid']);
    if (r.idleLobbies.min > r.idleLobbies.max) errors.push([...at, 'idle-lobbies', 'min-gt-max']);
    if (r.idleLobbies.min > 16) errors.push([...at, 'idle-lobbies', 'min-too-high']);
    if (r.idleLobbies.max > 32) errors.push([...at, 'idle-lobbies', 'max-too-high']);
  }
  if (gm.docker) errors.push(...dockerErrors(gm.docker));
  else errors.push(['no-runtime']);
  for (const [action, cfg] of [['find-config', gm.actions?.find], ['join-config', gm.actions?.join], ['join-config', gm.actions?.create]] as const) {
    // (server) a create block's errors are said under join-config, as production says them.
    if (cfg?.verification) errors.push(...verificationErrors(cfg.verification, loopback).map((p) => [action, 'verification-config', ...p]));
  }
  return errors;
}

function dockerErrors(d: DockerConfig): ValidationPath[] {
  const errors: ValidationPath[] = [];
  if (d.imageId === null) errors.push(['no-build']);
  if (d.args.length > 64) errors.push(['args-too-many']);
  const args = new Set<string>();
  d.args.slice(0, 64).forEach((arg, i) => {
    if (arg.length === 0) errors.push(['args', String(i), 'invalid']);
    else if (bytes(arg) > 512) errors.push(['args', String(i), 'too-long']);
    else if (args.has(arg)) errors.push(['args', String(i), 'not-unique']);
    else args.add(arg);
  });
  const env = Object.entries(d.env);
  if (env.length > 64) errors.push(['env-vars-too-many']);
  for (const [key, value] of env.slice(0, 64)) {
    const at = ['env-vars', `*${key}*`];
    if (key.length === 0) errors.push([...at, 'key', 'invalid']);
    else if (bytes(key) > 64) errors.push([...at, 'key', 'too-long']);
    if (value.length === 0) errors.push([...at, 'value', 'invalid']);
    else if (bytes(value) > 512) errors.push([...at, 'value', 'too-long']);
    // (server quirk) range ports are checked as PORT_RANGE_<label>_MIN/_MAX, not the names a lobby is given.
    const portName = d.ports.some((p) => (p.port !== null ? key === `PORT_${p.label.replace(/-/g, '_')}` : p.portRange !== null && (key === `PORT_RANGE_${p.label}_MIN` || key === `PORT_RANGE_${p.label}_MAX`)));
    if (DEFAULT_ENV_KEYS.has(key) || portName) errors.push([...at, 'key', 'conflicts-with-default']);
  }
  // Production refuses `network_mode: host` (host-networking-disabled) unless the game has a flag its dashboard does
  // not set; the emulator's games have it: a game server on a laptop or a staging host may well use the host's network.
  if (d.ports.length > 16) errors.push(['ports-too-many']);
  const labels = new Set<string>();
  const pairs = new Set<string>();
  const ranges: { protocol: Protocol; min: number; max: number }[] = [];
  for (const p of d.ports.slice(0, 16)) {
    const at = ['ports', `*${p.label}*`];
    if (!ident(p.label)) errors.push([...at, 'label-invalid']);
    else if (labels.has(p.label)) errors.push([...at, 'label-not-unique']);
    else labels.add(p.label);
    if (p.port !== null) {
      const pair = `${p.port}/${p.protocol}`;
      if (pairs.has(pair)) errors.push([...at, 'port-protocol-not-unique']);
      else pairs.add(pair);
    }
    const range = p.portRange;
    if (d.networkMode === 'host' && p.proxy === 'none' && (p.protocol === 'tcp' || p.protocol === 'udp') && p.port === null && range) {
      if (range.min > range.max) errors.push([...at, 'range-min-gt-max']);
      if (range.min < MIN_HOST_PORT || range.max > MAX_HOST_PORT) errors.push([...at, 'port-out-of-range']);
      else if (ranges.some((o) => o.protocol === p.protocol && range.max >= o.min && range.min <= o.max)) errors.push([...at, 'ranges-overlap']);
      ranges.push({ protocol: p.protocol, ...range });
    } else if (p.proxy === 'game_guard' && p.port !== null && !range) {
      // Valid: the proxy in front of one port, whatever the protocol.
    } else if (p.port !== null && range) errors.push([...at, 'duplicate-port-and-port-range']);
    else if (p.port === null && !range) errors.push([...at, 'missing-port-and-port-range']);
    else if (d.networkMode === 'host' && p.port !== null) errors.push([...at, 'unsupported-target-port']);
    else if (p.proxy === 'game_guard') errors.push([...at, 'unsupported-port-range']);
    else if (d.networkMode === 'bridge') errors.push([...at, 'needs-host-network']);
    else errors.push([...at, 'needs-game-guard']);
  }
  return errors;
}

/** A verification call's URL and headers, checked as production checks them before it calls the URL. */
function verificationErrors(v: VerificationConfig, loopback: boolean): ValidationPath[] {
  const errors: ValidationPath[] = [];
  let url: URL | undefined;
  try {
    url = new URL(v.url);
  } catch {
    url = undefined;
  }
  if (url === undefined || url.hostname === '') errors.push(['url', 'no-host']);
  else if (url.protocol !== 'http:' && url.protocol !== 'https:') errors.push(['url', 'invalid-scheme']);
  else if (!loopback && isIpHost(url.hostname) && !globallyRoutable(url.hostname)) errors.push(['url', 'invalid-ip']);
  else if (!loopback && url.hostname.endsWith('.local')) errors.push(['url', 'invalid']);
  const headers = Object.entries(v.headers);
  if (headers.length > 32) errors.push(['headers-meta', 'too-many']);
  for (const [name, value] of headers.slice(0, 32)) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) errors.push(['headers', `*${name}*`, 'invalid-name']);
    // eslint-disable-next-line no-control-regex
    else if (/[\x00-\x08\x0a-\x1f\x7f]/.test(value)) errors.push(['headers', `*${name}*`, 'invalid-value']);
  }
  return errors;
}
