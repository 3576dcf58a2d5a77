// Times and durations as users type them: RFC 3339, epoch milliseconds, and durations such as 90m, 24h, 7d.
import { UsageError } from './errors.js';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `90m`, `24h`, `7d`, `1h30m`, `45s`; returns ms. */
export function parseDuration(flag: string, raw: string): number {
  const text = raw.trim().toLowerCase();
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/gy;
  let total = 0;
  let matched = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    matched = re.lastIndex;
  }
  if (!text || matched !== text.length) {
    throw new UsageError(`${flag} must be a duration such as 90m, 24h or 7d, not "${raw}"`);
  }
  if (total <= 0) throw new UsageError(`${flag} must be longer than zero`);
  return Math.round(total);
}

/** RFC 3339 (or an ISO date), or ms since the epoch. */
export function parseTime(flag: string, raw: string): number {
  const text = raw.trim();
  if (/^\d+$/.test(text)) {
    const ms = Number(text);
    if (!Number.isSafeInteger(ms)) throw new UsageError(`${flag} is out of range: ${raw}`);
    return ms;
  }
  if (/^\d{4}-\d{2}-\d{2}([tT ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([zZ]|[+-]\d{2}:?\d{2})?)?$/.test(text)) {
    // A date or time without a zone is read as UTC, so a script gives the same window on every machine.
    const hasZone = /([zZ]|[+-]\d{2}:?\d{2})$/.test(text) && text.length > 10;
    const iso = text.length === 10 ? `${text}T00:00:00Z` : hasZone ? text : `${text}Z`;
    const ms = Date.parse(iso.replace(' ', 'T'));
    if (!Number.isNaN(ms)) return ms;
  }
  throw new UsageError(`${flag} must be an RFC 3339 time (2026-11-20T10:00:00Z) or epoch milliseconds, not "${raw}"`);
}
