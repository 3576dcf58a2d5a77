// The emulator's configuration file (`gamehost emulator serve --config`, or GAMEHOST_EMULATOR_CONFIG for the
// embedded one): a JSON object with any of the EmulatorConfig fields.
import fs from 'node:fs';
import type { EmulatorConfig } from '../emulator/index.js';
import { UsageError, describeFsError } from '../errors.js';

const NUMBER_FIELDS = ['startDelayMs', 'readyDelayMs', 'idleLifetimeMs', 'partSize', 'singlePartMax', 'maxUploadBytes'] as const;
// Delays may be zero; sizes may not.
const POSITIVE = new Set<string>(['partSize', 'singlePartMax', 'maxUploadBytes']);

export function loadEmulatorConfig(file: string): Partial<EmulatorConfig> {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    const why = err instanceof SyntaxError ? `not valid JSON (${err.message})` : describeFsError(err);
    throw new UsageError(`emulator config ${file}: ${why}`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new UsageError(`emulator config ${file}: must be a JSON object`);
  const cfg = raw as Record<string, unknown>;
  const out: Partial<EmulatorConfig> = {};
  for (const key of NUMBER_FIELDS) {
    if (cfg[key] === undefined) continue;
    const min = POSITIVE.has(key) ? 1 : 0;
    if (typeof cfg[key] !== 'number' || !Number.isSafeInteger(cfg[key]) || (cfg[key] as number) < min) {
      throw new UsageError(`emulator config ${file}: ${key} must be a whole number of at least ${min}`);
    }
    out[key] = cfg[key] as number;
  }
  if (cfg.tokenless !== undefined) {
    if (typeof cfg.tokenless !== 'boolean') throw new UsageError(`emulator config ${file}: tokenless must be true or false`);
    out.tokenless = cfg.tokenless;
  }
  if (cfg.gameModes !== undefined) {
    if (!Array.isArray(cfg.gameModes) || !cfg.gameModes.length || !cfg.gameModes.every((m) => typeof m === 'string' && m)) {
      throw new UsageError(`emulator config ${file}: gameModes must be a list of names`);
    }
    out.gameModes = cfg.gameModes as string[];
  }
  if (cfg.regions !== undefined) {
    const ok = Array.isArray(cfg.regions) && cfg.regions.length > 0 && cfg.regions.every((r) => r && typeof r.id === 'string' && typeof r.name === 'string');
    if (!ok) throw new UsageError(`emulator config ${file}: regions must be a list of {"id", "name"}`);
    out.regions = cfg.regions as EmulatorConfig['regions'];
  }
  const known = new Set<string>([...NUMBER_FIELDS, 'tokenless', 'gameModes', 'regions']);
  const unknown = Object.keys(cfg).filter((k) => !known.has(k));
  if (unknown.length) throw new UsageError(`emulator config ${file}: unknown field ${unknown.join(', ')}`);
  return out;
}
