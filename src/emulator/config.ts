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
  /**
   * Per game mode (by name): the command that starts its lobbies' servers, over `run` (giving one implies readiness
   * `run`), and the ports its lobbies have, instead of the default ones (`default`, a free TCP port, and
   * `game-range`, ten ports).
   */
  gameModeSettings: Record<string, GameModeSettings>;
  /**
   * Readiness `run`: the lobbies whose servers one emulator (replica) runs at once, at most; past it, find and create
   * answer MATCHMAKER_TOO_MANY_LOBBIES instead of starting another.
   */
  maxRunningLobbies: number;
  /**
   * Readiness `run`: this emulator's replica id, which the store records as the owner of the lobbies whose servers it
   * runs; null: the id kept in the data directory's `replica` file (made on first use). Stable across restarts.
   */
  replica: string | null;
  /**
   * Readiness `run`: variables of the emulator's own environment a lobby's server also gets, by name (`--pass-env`).
   * A server gets its lobby's variables and a short allow-list of the host's (runtime/process.ts) and nothing else.
   */
  passEnv: string[];
  /** A player made by find, join or create must connect within this long (of it, or of its lobby's ready). */
  registrationWindowMs: number;
  /** A manual lobby whose server has not called ready this long after its creation is stopped. */
  readyWindowMs: number;
  /** The service's per-IP rate limits and its limit of unconnected players from one address (off by default). */
  rateLimits: boolean;
  /**
   * Lets a version's verification URL (find, join, create) name a loopback or private address, which production
   * refuses: for a local emulator and a verification server on the same host. Off by default: a shared emulator
   * would otherwise call into its own network for whoever creates a version (SSRF).
   */
  verificationLoopback: boolean;
  /** Multipart part size. */
  partSize: number;
  /** Files below this get one presigned entry. */
  singlePartMax: number;
  /** content_length must be below this. */
  maxUploadBytes: number;
  /** `runBuild`: the largest a build's image may unpack to (its tar, each layer unpacked); a larger one is refused as it loads. */
  maxImageBytes: number;
  /**
   * The longest a query of the store or a request to the bucket may take before the request that made it is
   * answered 503 naming it (and health reports it): a stalled database or bucket never holds a request longer.
   */
  storeTimeoutMs: number;
  /** A stopped lobby's log lines (and its server's samples) are kept this long after its stop, then removed. */
  logRetentionMs: number;
}

/** What a game mode's lobbies run and listen on. */
export interface GameModeSettings {
  run?: string;
  /** By label (PORT_<label> in the environment, `-` as `_`). */
  ports?: Record<string, PortSetting>;
}

export const PORT_PROTOCOLS = ['tcp', 'udp', 'http'] as const;
export type PortProtocol = (typeof PORT_PROTOCOLS)[number];

/**
 * A game mode's port: one port (a port of that protocol free on this host when the lobby is made), or a range of
 * ports given as is (the server picks within it, as production's port_range with host networking).
 */
export interface PortSetting {
  protocol: PortProtocol;
  range?: { min: number; max: number };
}

// A port label becomes part of an environment variable's name.
const PORT_LABEL = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;

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
  gameModeSettings: Object.freeze({}) as EmulatorConfig['gameModeSettings'],
  maxRunningLobbies: 16,
  replica: null,
  passEnv: Object.freeze<string[]>([]) as string[],
  registrationWindowMs: 2 * 60 * 1000,
  readyWindowMs: 5 * 60 * 1000,
  rateLimits: false,
  verificationLoopback: false,
  partSize: 100 * MiB,
  singlePartMax: 5 * MiB,
  maxUploadBytes: 8_000_000_000,
  maxImageBytes: 4 * 1024 * MiB,
  storeTimeoutMs: 5_000,
  logRetentionMs: 7 * 24 * 60 * 60 * 1000,
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
  'maxImageBytes',
  'storeTimeoutMs',
  'maxRunningLobbies',
  'logRetentionMs',
] as const;
// Delays may be zero; sizes, windows and the store's bound may not (a singlePartMax of 0 would plan an empty file in zero parts).
const POSITIVE = new Set<string>(['partSize', 'singlePartMax', 'maxUploadBytes', 'maxImageBytes', 'registrationWindowMs', 'readyWindowMs', 'storeTimeoutMs', 'maxRunningLobbies', 'logRetentionMs']);
const FIELDS = new Set<string>([...NUMBER_FIELDS, 'tokenless', 'rateLimits', 'verificationLoopback', 'readiness', 'run', 'runBuild', 'replica', 'passEnv', 'gameModes', 'gameModeSettings', 'regions']);

/** What a replica id may be (`--replica`, the config's `replica`): a name fit for a label and a log line. */
export const REPLICA_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/**
 * Why a name cannot be passed to lobbies' servers (`--pass-env`, the config's `passEnv`), or undefined: a name as a
 * shell spells it, and none of the emulator's own (GAMEHOST_*: its admin token, signing secret, database URL) nor
 * of the lobby's (RIVET_*, PORT_*: the lobby sets those).
 */
export function passEnvProblem(name: string): string | undefined {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return `"${name}" is not a variable name (letters, digits and _, not starting with a digit)`;
  if (/^GAMEHOST_/i.test(name)) return `${name} is the emulator's own: a server never gets GAMEHOST_* variables`;
  if (/^(RIVET|PORT)_/i.test(name)) return `${name} is the lobby's to set: a server gets its lobby's RIVET_* and PORT_* variables`;
  return undefined;
}

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
  if (cfg.verificationLoopback !== undefined) {
    if (typeof cfg.verificationLoopback !== 'boolean') throw new EmulatorConfigError('verificationLoopback must be true or false');
    out.verificationLoopback = cfg.verificationLoopback;
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
  if (cfg.replica !== undefined && cfg.replica !== null) {
    if (typeof cfg.replica !== 'string' || !REPLICA_NAME.test(cfg.replica))
      throw new EmulatorConfigError('replica must be 1 to 63 letters, digits, ".", "_" or "-", starting with a letter or digit');
    out.replica = cfg.replica;
  }
  if (cfg.passEnv !== undefined) {
    if (!Array.isArray(cfg.passEnv) || !cfg.passEnv.every((n: unknown) => typeof n === 'string')) throw new EmulatorConfigError('passEnv must be a list of variable names');
    for (const name of cfg.passEnv as string[]) {
      const problem = passEnvProblem(name);
      if (problem !== undefined) throw new EmulatorConfigError(`passEnv: ${problem}`);
    }
    out.passEnv = [...new Set(cfg.passEnv as string[])];
  }
  if (cfg.runBuild !== undefined && cfg.runBuild !== null && cfg.runBuild !== false) {
    if (cfg.runBuild !== true && (typeof cfg.runBuild !== 'string' || !IMAGE_TAG_RE.test(cfg.runBuild)))
      throw new EmulatorConfigError('runBuild must be true (the newest build) or an image tag such as "game-server:v1"');
    if (out.run !== undefined) throw new EmulatorConfigError('give run (a command) or runBuild (a pushed build), not both');
    if (out.readiness !== undefined && out.readiness !== 'run') throw new EmulatorConfigError(`runBuild goes with readiness run, not ${out.readiness}`);
    out.runBuild = cfg.runBuild;
    out.readiness = 'run';
  }
  if (cfg.gameModes !== undefined) {
    const modes = cfg.gameModes;
    if (!Array.isArray(modes) || modes.length === 0 || !modes.every(isName))
      throw new EmulatorConfigError('gameModes must be a non-empty list of names');
    out.gameModes = [...modes];
  }
  if (cfg.gameModeSettings !== undefined) {
    out.gameModeSettings = checkGameModeSettings(cfg.gameModeSettings, out.gameModes ?? DEFAULT_CONFIG.gameModes);
    const withRun = Object.entries(out.gameModeSettings).filter(([, m]) => m.run !== undefined);
    if (withRun.length > 0) {
      if (out.readiness !== undefined && out.readiness !== 'run')
        throw new EmulatorConfigError(`gameModeSettings.${withRun[0]![0]}.run goes with readiness run, not ${out.readiness}`);
      if (out.runBuild !== undefined) throw new EmulatorConfigError(`gameModeSettings.${withRun[0]![0]}.run: every lobby runs the pushed build with runBuild`);
      out.readiness = 'run';
    }
  }
  if (out.readiness === 'run' && out.run === undefined && out.runBuild === undefined && !hasModeRuns(out))
    throw new EmulatorConfigError('readiness run needs run (the command that starts a lobby\'s server) or runBuild (a pushed build)');
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

function hasModeRuns(config: Partial<EmulatorConfig>): boolean {
  return Object.values(config.gameModeSettings ?? {}).some((m) => m.run !== undefined);
}

function checkGameModeSettings(raw: unknown, gameModes: readonly string[]): Record<string, GameModeSettings> {
  const field = 'gameModeSettings';
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new EmulatorConfigError(`${field} must be an object of game modes`);
  const out: Record<string, GameModeSettings> = {};
  for (const [mode, value] of Object.entries(raw as Record<string, unknown>)) {
    const at = `${field}.${mode}`;
    if (!gameModes.includes(mode)) throw new EmulatorConfigError(`${at}: no such game mode (gameModes has ${gameModes.join(', ')})`);
    if (!value || typeof value !== 'object' || Array.isArray(value)) throw new EmulatorConfigError(`${at} must be an object with run and ports`);
    const { run, ports, ...rest } = value as Record<string, unknown>;
    const unknown = Object.keys(rest);
    if (unknown.length) throw new EmulatorConfigError(`${at}: unknown field ${unknown.join(', ')}`);
    const settings: GameModeSettings = {};
    if (run !== undefined) {
      if (typeof run !== 'string' || run.trim() === '') throw new EmulatorConfigError(`${at}.run must be a non-empty command`);
      settings.run = run;
    }
    if (ports !== undefined) {
      if (!ports || typeof ports !== 'object' || Array.isArray(ports) || Object.keys(ports).length === 0)
        throw new EmulatorConfigError(`${at}.ports must be an object of ports by label, at least one`);
      settings.ports = {};
      for (const [label, port] of Object.entries(ports as Record<string, unknown>)) {
        settings.ports[label] = checkPort(`${at}.ports.${label}`, label, port);
      }
      const names = Object.keys(settings.ports).map((l) => l.replace(/-/g, '_'));
      const twice = names.find((n, i) => names.indexOf(n) !== i);
      if (twice !== undefined) throw new EmulatorConfigError(`${at}.ports: two labels make PORT_${twice}`);
    }
    out[mode] = settings;
  }
  return out;
}

function checkPort(at: string, label: string, raw: unknown): PortSetting {
  if (!PORT_LABEL.test(label)) throw new EmulatorConfigError(`${at}: a label is 1 to 63 letters, digits, "_" or "-", starting with a letter or digit`);
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new EmulatorConfigError(`${at} must be an object with protocol and, for a range, range`);
  const { protocol, range, ...rest } = raw as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length) throw new EmulatorConfigError(`${at}: unknown field ${unknown.join(', ')}`);
  if (!(PORT_PROTOCOLS as readonly unknown[]).includes(protocol)) throw new EmulatorConfigError(`${at}.protocol must be one of ${PORT_PROTOCOLS.join(', ')}`);
  const port: PortSetting = { protocol: protocol as PortProtocol };
  if (range !== undefined) {
    const { min, max } = (range ?? {}) as { min?: unknown; max?: unknown };
    const valid = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 65535;
    if (typeof range !== 'object' || range === null || !valid(min) || !valid(max) || min > max || Object.keys(range).length !== 2)
      throw new EmulatorConfigError(`${at}.range must be {"min", "max"}, ports from 1 to 65535, min not above max`);
    port.range = { min, max };
  }
  return port;
}

/** The command that starts a game mode's lobbies' servers: its own, else `run`; undefined when there is none. */
export function commandFor(config: EmulatorConfig, gameMode: string): string | undefined {
  return config.gameModeSettings[gameMode]?.run ?? config.run ?? undefined;
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
  const config: EmulatorConfig = {
    ...DEFAULT_CONFIG,
    gameModes: [...DEFAULT_CONFIG.gameModes],
    regions: DEFAULT_CONFIG.regions.map((r) => ({ ...r })),
    gameModeSettings: {},
    ...given,
  };
  // Every game mode needs a command where the emulator runs servers (a created game's other modes stop failed).
  const without = config.readiness === 'run' && config.runBuild === null ? config.gameModes.filter((m) => commandFor(config, m) === undefined) : [];
  if (without.length > 0)
    throw new EmulatorConfigError(`Invalid emulator config: readiness run needs run, or a run in gameModeSettings for every game mode (none for ${without.join(', ')})`);
  return config;
}
