// Formatting of sizes, durations and times, for people (a terminal) and for scripts (a pipe).

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  if (unit === 0) return `${value} B`;
  return `${value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2)} ${UNITS[unit]}`;
}

/** 850 ms, 4.2 s, 3m 05s, 2h 04m, 3d 4h */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '-';
  const negative = ms < 0;
  let v = Math.abs(ms);
  let out: string;
  if (v < 1000) out = `${Math.round(v)} ms`;
  else if (v < 60_000) out = `${(v / 1000).toFixed(v < 10_000 ? 1 : 0)} s`;
  else {
    v = Math.floor(v / 1000);
    const d = Math.floor(v / 86_400);
    const h = Math.floor((v % 86_400) / 3600);
    const m = Math.floor((v % 3600) / 60);
    const s = v % 60;
    if (d > 0) out = `${d}d ${h}h`;
    else if (h > 0) out = `${h}h ${String(m).padStart(2, '0')}m`;
    else out = `${m}m ${String(s).padStart(2, '0')}s`;
  }
  return negative ? `-${out}` : out;
}

export interface TimeStyle {
  /** Local zone, human form (a terminal) instead of RFC 3339 UTC (pipes, JSON). */
  local: boolean;
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/** RFC 3339 in UTC for scripts; `YYYY-MM-DD HH:MM:SS ±HH:MM` in the local zone for people. */
export function formatTime(value: string | number | Date, style: TimeStyle): string {
  const d = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(d.getTime())) return String(value);
  if (!style.local) return d.toISOString().replace('.000Z', 'Z');
  const offset = -d.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  const zone = `${sign}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())} ${zone}`
  );
}

export function formatRate(bytesPerSecond: number): string {
  return `${formatBytes(Math.round(bytesPerSecond))}/s`;
}
