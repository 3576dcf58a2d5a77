// The checks and conversions of command-line values, shared by the command definitions: each failure is one line
// naming the flag, raised before any request. The `value` converters go in an option's declaration
// (`value: integer({ min: 1 })`), so `parse` receives the typed value. Loaded for every --help, so it imports
// nothing more (node:fs alone would cost 1.5 ms there).
import { UsageError } from '../errors.js';
import { parseUuid } from '../uuid.js';

export function parseInteger(flag: string, raw: unknown, range: { min?: number; max?: number } = {}): number {
  const text = String(raw).trim();
  if (!/^[+-]?\d+$/.test(text)) throw new UsageError(`${flag} must be a whole number, not "${raw}"`);
  const value = Number(text);
  const { min, max } = range;
  if (!Number.isSafeInteger(value)) throw new UsageError(`${flag} is too large: ${raw}`);
  if (min !== undefined && value < min) {
    throw new UsageError(max !== undefined ? `${flag} must be from ${min} to ${max}, not ${value}` : `${flag} must be at least ${min}, not ${value}`);
  }
  if (max !== undefined && value > max) throw new UsageError(`${flag} must be from ${min ?? 0} to ${max}, not ${value}`);
  return value;
}

/** A whole number in a range: `value: integer({ min: 1, max: 64 })`. */
export const integer =
  (range: { min?: number; max?: number } = {}) =>
  (raw: string, flag: string): number =>
    parseInteger(flag, raw, range);

/** The longest `--interval` or `--watch`: a day (Node's timers overflow past 24.8 days, then fire at once). */
export const MAX_INTERVAL_SECONDS = 86_400;

/** `--interval 2`, `--watch 0.5`: seconds, from a tenth to a day; in ms. */
export function milliseconds(raw: string, flag: string): number {
  const text = raw.trim();
  const seconds = /^\d+(\.\d+)?$/.test(text) ? Number(text) : NaN;
  if (!(seconds >= 0.1 && seconds <= MAX_INTERVAL_SECONDS))
    throw new UsageError(`${flag} must be a number of seconds from 0.1 to ${MAX_INTERVAL_SECONDS} (a day), not "${raw}"`);
  return Math.round(seconds * 1000);
}

/** `--timeout 30`, `--timeout 2.5`: any positive number of seconds; in ms. */
export function timeoutMs(raw: string, flag: string): number {
  const seconds = raw.trim() === '' ? NaN : Number(raw);
  if (!(Number.isFinite(seconds) && seconds > 0)) throw new UsageError(`${flag} must be a positive number of seconds, not "${raw}"`);
  return Math.round(seconds * 1000);
}

const SIZE = /^(\d+(?:\.\d+)?)\s*(?:([kmgt])(?:i?b)?|b)?$/i;
const UNIT = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 } as const;

/**
 * The one grammar for sizes: bytes, or a number with K, M, G or T in either spelling (`20M`, `20MiB`, `20MB`),
 * all powers of 1024; `1.5G` is allowed and rounded down to whole bytes.
 */
export function parseSize(raw: string): number | undefined {
  const m = SIZE.exec(raw.trim());
  if (!m) return undefined;
  const value = Math.floor(Number(m[1]) * UNIT[(m[2] ?? '').toLowerCase() as keyof typeof UNIT]);
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/** `--part-size 64KiB` or `64K`: a size in bytes. */
export function bytes(raw: string, flag: string): number {
  const value = parseSize(raw);
  if (value === undefined) throw new UsageError(`${flag} must be a size in bytes such as 65536, 64K, 64KiB or 1M, not "${raw}"`);
  return value;
}

/** `--limit-rate 20M`, `20MiB` or `20M/s`: bytes per second. */
export function bytesPerSecond(raw: string, flag: string): number {
  const value = parseSize(raw.trim().replace(/\/s$/i, ''));
  if (value === undefined) throw new UsageError(`${flag} must be bytes per second such as 500K, 20M or 20MiB, not "${raw}"`);
  return value;
}

export function parseChoice<T extends string>(flag: string, raw: unknown, choices: readonly T[]): T {
  if (!choices.includes(raw as T)) {
    throw new UsageError(`${flag} must be one of ${choices.join(', ')}, not "${raw}"`);
  }
  return raw as T;
}

/** `key=value` pairs, repeatable. */
export function parseKeyValues(flag: string, raws: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of raws) {
    const eq = raw.indexOf('=');
    if (eq <= 0) throw new UsageError(`${flag} must be key=value, not "${raw}"`);
    out[raw.slice(0, eq)] = raw.slice(eq + 1);
  }
  return out;
}

// Below the commands, as src/config/target.ts checks the ids it resolves with it too.
export { parseUuid } from '../uuid.js';

export function parseLobbyId(raw: string): string {
  return parseUuid('the lobby id', raw);
}
