// Validation helpers shared by the commands: each failure is one line naming the flag, raised before any request.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from '../errors.js';

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

export function parseChoice<T extends string>(flag: string, raw: unknown, choices: readonly T[]): T {
  if (!choices.includes(raw as T)) {
    throw new UsageError(`${flag} must be one of ${choices.join(', ')}, not "${raw}"`);
  }
  return raw as T;
}

/** `--flag <json|@file>`: inline JSON, or @path to a JSON file (relative to cwd). */
export function parseJsonArg(flag: string, raw: string, cwd: string): unknown {
  let text = raw;
  let source = 'the value';
  if (raw.startsWith('@')) {
    const file = path.resolve(cwd, raw.slice(1));
    source = file;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      throw new UsageError(`${flag}: cannot read ${file}: ${describeFsError(err)}`);
    }
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${flag}: ${source} is not valid JSON (${(err as Error).message})`);
  }
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

export function describeFsError(err: unknown): string {
  const code = (err as NodeJS.ErrnoException)?.code;
  switch (code) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'is a directory';
    case 'ENOTDIR':
      return 'a part of the path is not a directory';
    default:
      return (err as Error)?.message ?? String(err);
  }
}

/** Collects a repeatable option's values (commander's argParser). */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `<lobby-id>`: a UUID, lower-cased as the service writes it. */
export function parseLobbyId(raw: string): string {
  const id = raw.trim();
  if (!UUID.test(id)) throw new UsageError(`<lobby-id> must be a UUID, not "${raw}"`);
  return id.toLowerCase();
}

/** `--interval 2`, `--watch 0.5`: seconds, at least a tenth; returns ms. */
export function parseSeconds(flag: string, raw: unknown): number {
  const text = String(raw).trim();
  const seconds = /^\d+(\.\d+)?$/.test(text) ? Number(text) : NaN;
  if (!(seconds >= 0.1)) throw new UsageError(`${flag} must be a number of seconds of at least 0.1, not "${raw}"`);
  return Math.round(seconds * 1000);
}
