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
  /** Multipart part size. */
  partSize: number;
  /** Files below this get one presigned entry. */
  singlePartMax: number;
  /** content_length must be below this. */
  maxUploadBytes: number;
}

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
  partSize: 100 * MiB,
  singlePartMax: 5 * MiB,
  maxUploadBytes: 8_000_000_000,
});

const isName = (v: unknown): boolean => typeof v === 'string' && v.length > 0;

/** Merges over the defaults and refuses values the emulator could not serve (a programming error, so it throws). */
export function resolveConfig(partial: Partial<EmulatorConfig> = {}): EmulatorConfig {
  // An explicit undefined means "not given", not "unset the default".
  const given = Object.fromEntries(Object.entries(partial).filter(([, v]) => v !== undefined));
  const config: EmulatorConfig = { ...DEFAULT_CONFIG, ...given };
  const problems: string[] = [];
  if (config.gameModes.length === 0 || !config.gameModes.every(isName))
    problems.push('gameModes must be a non-empty list of names');
  if (config.regions.length === 0 || !config.regions.every((r) => isName(r.id) && isName(r.name)))
    problems.push('regions must be a non-empty list of {id, name}');
  for (const key of ['startDelayMs', 'readyDelayMs', 'idleLifetimeMs', 'singlePartMax'] as const)
    if (!Number.isSafeInteger(config[key]) || config[key] < 0) problems.push(`${key} must be a non-negative integer`);
  for (const key of ['partSize', 'maxUploadBytes'] as const)
    if (!Number.isSafeInteger(config[key]) || config[key] < 1) problems.push(`${key} must be a positive integer`);
  if (problems.length > 0) throw new Error(`Invalid emulator config: ${problems.join('; ')}`);
  return {
    ...config,
    gameModes: [...config.gameModes],
    regions: config.regions.map((r) => ({ id: r.id, name: r.name })),
  };
}
