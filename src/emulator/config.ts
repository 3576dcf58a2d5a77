// The emulator's knobs, their defaults and their validation.

export interface EmulatorConfig {
  gameModes: string[];
  regions: { id: string; name: string }[];
  /** The namespace allows lobby create without a token. */
  tokenless: boolean;
  /** created -> started. */
  startDelayMs: number;
  /** started -> ready. */
  readyDelayMs: number;
  /** A ready lobby with no player joining for this long stops by itself (exit code 0); 0 means never. */
  idleLifetimeMs: number;
  /**
   * How a lobby becomes ready: `delay` (after startDelayMs + readyDelayMs, no server needed) or `manual` (when its
   * server, started by hand with `emulator lobby env`, calls ready; stopped if it has not within readyWindowMs) or
   * `run` (as manual, the server started by the emulator with the command `run`).
   */
  readiness: Readiness;
  /**
   * The command that runs each lobby's server (readiness `run`, which giving it implies): through the shell, with
   * the lobby's environment, in a working directory of its own under the data directory.
   */
  run: string | null;
  /**
   * Each lobby's server is a pushed build run in a container (readiness `run`, which giving it implies): the build
   * with this image tag (`game-server:v1`, as `build push --tag` gave it), or `true` for the game's newest complete
   * build. Not with `run`.
   */
  runBuild: string | true | null;
  /** A player made by find, join or create must connect within this long (of it, or of its lobby's ready). */
  registrationWindowMs: number;
  /** A manual lobby whose server has not called ready this long after its creation is stopped. */
  readyWindowMs: number;
  /** The service's per-IP rate limits and its limit of unconnected players from one address (off by default). */
  rateLimits: boolean;
  /** Multipart part size. */
  partSize: number;
  /** Files below this get one presigned entry. */
  singlePartMax: number;
  /** content_length must be below this. */
  maxUploadBytes: number;
  /**
   * The longest a query of the store or a request to the bucket may take before the request that made it is
   * answered 503 naming it (and health reports it): a stalled database or bucket never holds a request longer.
   */
  storeTimeoutMs: number;
}

export const READINESS_MODES = ['delay', 'manual', 'run'] as const;
export type Readiness = (typeof READINESS_MODES)[number];

const MiB = 1024 * 1024;

export const DEFAULT_CONFIG: EmulatorConfig = Object.freeze({
  gameModes: Object.freeze(['default', 'duos', 'squads']) as string[],
  regions: Object.freeze([
    Object.freeze({ id: 'lnd-atl', name: 'Atlanta' }),
    Object.freeze({ id: 'lnd-fra', name: 'Frankfurt' }),
    Object.freeze({ id: 'lnd-sgp', name: 'Singapore' }),
  ]) as EmulatorConfig['regions'],
  tokenless: true,
  startDelayMs: 1000,
  readyDelayMs: 1000,
  idleLifetimeMs: 0,
  readiness: 'delay',
  run: null,
  runBuild: null,
  registrationWindowMs: 2 * 60 * 1000,
  readyWindowMs: 5 * 60 * 1000,
  rateLimits: false,
  partSize: 100 * MiB,
  singlePartMax: 5 * MiB,
  maxUploadBytes: 8_000_000_000,
  storeTimeoutMs: 5_000,
});

const NUMBER_FIELDS = [
  'startDelayMs',
  'readyDelayMs',
  'idleLifetimeMs',
  'registrationWindowMs',
  'readyWindowMs',
  'partSize',
  'singlePartMax',
  'maxUploadBytes',
  'storeTimeoutMs',
] as const;
// Delays may be zero; sizes, windows and the store's bound may not (a singlePartMax of 0 would plan an empty file in zero parts).
const POSITIVE = new Set<string>(['partSize', 'singlePartMax', 'maxUploadBytes', 'registrationWindowMs', 'readyWindowMs', 'storeTimeoutMs']);
const FIELDS = new Set<string>([...NUMBER_FIELDS, 'tokenless', 'rateLimits', 'readiness', 'run', 'runBuild', 'gameModes', 'regions']);

/** A config the emulator could not serve; the message names the field. */
export class EmulatorConfigError extends Error {}

// An image tag as builds keep it (base:tag, lowercase [0-9a-z_-] each side, no "-" at either end of a side).
const IMAGE_TAG_RE = /^(?!-)[0-9a-z_-]+(?<!-):(?!-)[0-9a-z_-]+(?<!-)$/;

const isName = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/**
 * The one check of a config, whether it comes from a JSON file (`--config`, GAMEHOST_EMULATOR_CONFIG) or from
 * code: every given field must be known and servable. An undefined field counts as not given.
 */
export function checkConfig(raw: unknown): Partial<EmulatorConfig> {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new EmulatorConfigError('must be a JSON object');
  const given = Object.entries(raw as Record<string, unknown>).filter(([, v]) => v !== undefined);
  const unknown = given.map(([k]) => k).filter((k) => !FIELDS.has(k));
  if (unknown.length) throw new EmulatorConfigError(`unknown field ${unknown.join(', ')}`);
  const cfg = Object.fromEntries(given);
  const out: Partial<EmulatorConfig> = {};
  for (const key of NUMBER_FIELDS) {
    const value = cfg[key];
    if (value === undefined) continue;
    const min = POSITIVE.has(key) ? 1 : 0;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min)
      throw new EmulatorConfigError(`${key} must be a whole number of at least ${min}`);
    out[key] = value;
  }
  if (cfg.tokenless !== undefined) {
    if (typeof cfg.tokenless !== 'boolean') throw new EmulatorConfigError('tokenless must be true or false');
    out.tokenless = cfg.tokenless;
  }
  if (cfg.rateLimits !== undefined) {
    if (typeof cfg.rateLimits !== 'boolean') throw new EmulatorConfigError('rateLimits must be true or false');
    out.rateLimits = cfg.rateLimits;
  }
  if (cfg.readiness !== undefined) {
    if (!(READINESS_MODES as readonly unknown[]).includes(cfg.readiness))
      throw new EmulatorConfigError(`readiness must be one of ${READINESS_MODES.join(', ')}`);
    out.readiness = cfg.readiness as Readiness;
  }
  if (cfg.run !== undefined && cfg.run !== null) {
    if (typeof cfg.run !== 'string' || cfg.run.trim() === '') throw new EmulatorConfigError('run must be a non-empty command');
    if (out.readiness !== undefined && out.readiness !== 'run') throw new EmulatorConfigError(`run goes with readiness run, not ${out.readiness}`);
    out.run = cfg.run;
    out.readiness = 'run';
  }
  if (cfg.runBuild !== undefined && cfg.runBuild !== null && cfg.runBuild !== false) {
    if (cfg.runBuild !== true && (typeof cfg.runBuild !== 'string' || !IMAGE_TAG_RE.test(cfg.runBuild)))
      throw new EmulatorConfigError('runBuild must be true (the newest build) or an image tag such as "game-server:v1"');
    if (out.run !== undefined) throw new EmulatorConfigError('give run (a command) or runBuild (a pushed build), not both');
    if (out.readiness !== undefined && out.readiness !== 'run') throw new EmulatorConfigError(`runBuild goes with readiness run, not ${out.readiness}`);
    out.runBuild = cfg.runBuild;
    out.readiness = 'run';
  }
  if (out.readiness === 'run' && out.run === undefined && out.runBuild === undefined)
    throw new EmulatorConfigError('readiness run needs run (the command that starts a lobby\'s server) or runBuild (a pushed build)');
  if (cfg.gameModes !== undefined) {
    const modes = cfg.gameModes;
    if (!Array.isArray(modes) || modes.length === 0 || !modes.every(isName))
      throw new EmulatorConfigError('gameModes must be a non-empty list of names');
    out.gameModes = [...modes];
  }
  if (cfg.regions !== undefined) {
    const regions = cfg.regions;
    const ok =
      Array.isArray(regions) &&
      regions.length > 0 &&
      regions.every((r: unknown) => typeof r === 'object' && r !== null && isName((r as { id?: unknown }).id) && isName((r as { name?: unknown }).name));
    if (!ok) throw new EmulatorConfigError('regions must be a non-empty list of {"id", "name"}');
    out.regions = (regions as { id: string; name: string }[]).map((r) => ({ id: r.id, name: r.name }));
  }
  return out;
}

/** Checks the given fields (see checkConfig) and fills in the rest from the defaults. */
export function resolveConfig(partial: Partial<EmulatorConfig> = {}): EmulatorConfig {
  let given: Partial<EmulatorConfig>;
  try {
    given = checkConfig(partial);
  } catch (err) {
    if (err instanceof EmulatorConfigError) throw new EmulatorConfigError(`Invalid emulator config: ${err.message}`);
    throw err;
  }
  return {
    ...DEFAULT_CONFIG,
    gameModes: [...DEFAULT_CONFIG.gameModes],
    regions: DEFAULT_CONFIG.regions.map((r) => ({ ...r })),
    ...given,
  };
}
