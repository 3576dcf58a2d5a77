// `history export`: what an export holds, told on stderr after the download (lobbies, lobby-hours, where), and
// the rows rendered as JSON lines or a table instead of the raw CSV.
import { formatCount, formatDuration, formatHours, formatTime, visibleWidth, zoneLabel } from '../format.js';
import { CsvError } from '../csv.js';
import { sanitizeLine } from '../sanitize.js';
import { tableChunks } from '../table.js';
import { labelled } from '../record.js';
import { paint, timeStyle, type ViewOptions } from './options.js';

/** Columns the service fills with milliseconds (since the epoch, or of uptime); empty while unknown. */
const NUMERIC_COLUMN = /(_ts|_ms)$/;

/** The export's columns, in the service's order (SERVICE-FACTS: games.matchmaker.exportMatchmakerLobbyHistory). */
export const HISTORY_COLUMNS = [
  'lobby_id', 'namespace_id', 'namespace_name', 'region_id', 'region_name', 'tier_name', 'version_id', 'version_name',
  'lobby_group_id', 'lobby_group_name', 'start_ts', 'stop_ts', 'total_uptime_ms', 'query_uptime_ms',
] as const;

/** Throws unless the header names every documented column (more are fine: a newer service may add some). */
export function checkHistoryHeader(header: readonly string[]): void {
  const names = new Set(header.map((h) => h.trim()));
  const missing = HISTORY_COLUMNS.filter((c) => !names.has(c));
  if (missing.length === 0) return;
  const first = sanitizeLine(header.join(',')).slice(0, 40);
  const what = missing.length === HISTORY_COLUMNS.length ? `no lobby history header (it starts "${first}")` : `the header lacks ${missing.join(', ')}`;
  throw new CsvError(1, what);
}

/** One CSV row by column name. */
export type HistoryRecord = Record<string, string>;

export function historyRecord(header: readonly string[], fields: readonly string[]): HistoryRecord {
  const record: HistoryRecord = {};
  for (let i = 0; i < header.length; i++) record[header[i]!] = fields[i] ?? '';
  return record;
}

const DECIMAL = /^-?\d+(\.\d+)?$/;

/** A decimal number (spaces around it allowed), or null: empty, or anything else. */
function toNumber(text: string | undefined): number | null {
  if (text === undefined || text.length === 0) return null;
  // The service writes bare digits: those need neither the pattern nor a trimmed copy.
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 48 || code > 57) return DECIMAL.test(text.trim()) ? Number(text) : null;
  }
  return Number(text);
}

/**
 * A row as a JSON object: the CSV's columns under their own names, millisecond columns as numbers (null when
 * empty), plus `start_time` and `stop_time` in RFC 3339 UTC for readers that want times rather than epochs.
 */
export function historyJson(record: HistoryRecord): Record<string, string | number | null> {
  const out: Record<string, string | number | null> = {};
  for (const [name, value] of Object.entries(record)) out[name] = NUMERIC_COLUMN.test(name) ? toNumber(value) : value;
  const iso = (ms: number | null) => (ms === null ? null : formatTime(ms, { local: false }));
  if ('start_ts' in record) out.start_time = iso(toNumber(record.start_ts));
  if ('stop_ts' in record) out.stop_time = iso(toNumber(record.stop_ts));
  return out;
}

export interface RankedGroup {
  name: string;
  lobbies: number;
  /** Lobby-time inside the window, ms. */
  query_uptime_ms: number;
}

export interface HistorySummary {
  lobbies: number;
  running: number;
  stopped: number;
  /** Whole lifetimes of the lobbies in the export, ms (a running lobby counted up to the window's end). */
  total_uptime_ms: number;
  /** The part of those lifetimes inside the window, ms. */
  query_uptime_ms: number;
  /** Busiest first (lobby-time in the window). */
  regions: RankedGroup[];
  game_modes: RankedGroup[];
}

/** Adds up an export row by row, holding only totals, so a large export needs no more memory than a small one. */
export class HistoryTally {
  private readonly s: HistorySummary = {
    lobbies: 0, running: 0, stopped: 0, total_uptime_ms: 0, query_uptime_ms: 0, regions: [], game_modes: [],
  };
  private readonly regions = new Map<string, RankedGroup>();
  private readonly modes = new Map<string, RankedGroup>();

  add(r: HistoryRecord): void {
    const windowMs = toNumber(r.query_uptime_ms) ?? 0;
    this.s.lobbies++;
    if ((r.stop_ts ?? '').trim() === '') this.s.running++;
    else this.s.stopped++;
    this.s.total_uptime_ms += toNumber(r.total_uptime_ms) ?? 0;
    this.s.query_uptime_ms += windowMs;
    bump(this.regions, r.region_name || r.region_id || '?', windowMs);
    bump(this.modes, r.lobby_group_name || r.lobby_group_id || '?', windowMs);
  }

  summary(): HistorySummary {
    const rank = (groups: Map<string, RankedGroup>) =>
      [...groups.values()].sort((a, b) => b.query_uptime_ms - a.query_uptime_ms || b.lobbies - a.lobbies || a.name.localeCompare(b.name));
    return { ...this.s, regions: rank(this.regions), game_modes: rank(this.modes) };
  }
}

function bump(groups: Map<string, RankedGroup>, name: string, windowMs: number): void {
  let g = groups.get(name);
  if (g === undefined) groups.set(name, (g = { name, lobbies: 0, query_uptime_ms: 0 }));
  g.lobbies++;
  g.query_uptime_ms += windowMs;
}

export interface HistoryWindow {
  start: number;
  end: number;
}

const TOP = 3;

/**
 * The busiest few groups, as many as fit in `width` (at least one), then how many more there are. A single one
 * more is named rather than counted: `· 1 more` would take about the room of its name and hide it.
 */
function ranked(groups: RankedGroup[], width: number): string {
  const top = groups.length === TOP + 1 ? TOP + 1 : TOP;
  const items = groups.slice(0, top).map((g, i) => {
    const count = i === 0 ? `${formatCount(g.lobbies)} lobb${g.lobbies === 1 ? 'y' : 'ies'}` : formatCount(g.lobbies);
    return `${sanitizeLine(g.name)} ${formatHours(g.query_uptime_ms)} (${count})`;
  });
  let text = '';
  for (let n = items.length; n >= 1; n--) {
    const left = groups.length - n;
    // Never `1 more`: the try before this one named it.
    if (left === 1) continue;
    text = items.slice(0, n).join(' · ') + (left > 0 ? ` · ${formatCount(left)} more` : '');
    if (visibleWidth(text) <= width) break;
  }
  return text;
}

/**
 * The summary told after an export. The CSV has no exit codes, so it can tell stopped from running but not a
 * failed stop from a clean one; the summary says so rather than guess.
 */
export function formatHistorySummary(s: HistorySummary, window: HistoryWindow, o: ViewOptions): string {
  const style = timeStyle(o);
  const rows: [string, string][] = [
    ['Window', `${formatTime(window.start, style)} → ${formatTime(window.end, style)} (${formatDuration(window.end - window.start)})`],
  ];
  if (s.lobbies === 0) {
    rows.push(['Lobbies', 'none ran in this window']);
    return labelled(o, rows);
  }
  // Room after the widest label ("Failed stops") and its gap; a pipe takes the whole list.
  const room = o.tty ? o.columns - 1 - 14 : Infinity;
  rows.push(
    ['Lobbies', `${formatCount(s.lobbies)}: ${formatCount(s.stopped)} stopped, ${formatCount(s.running)} still running`],
    ['Lobby-hours', `${formatHours(s.query_uptime_ms)} in the window, ${formatHours(s.total_uptime_ms)} in total`],
    ['Regions', ranked(s.regions, room)],
    ['Game modes', ranked(s.game_modes, room)],
    ['Failed stops', paint(o).dim('unknown: the export has no exit codes (see `lobby logs <id>`)')],
  );
  return labelled(o, rows);
}

export interface HistoryRow {
  lobbyId: string;
  mode: string;
  region: string;
  start: number | null;
  stop: number | null;
  totalMs: number | null;
  windowMs: number | null;
}

export function historyRow(r: HistoryRecord): HistoryRow {
  return {
    lobbyId: r.lobby_id ?? '',
    mode: r.lobby_group_name || r.lobby_group_id || '',
    region: r.region_name || r.region_id || '',
    start: toNumber(r.start_ts),
    stop: toNumber(r.stop_ts),
    totalMs: toNumber(r.total_uptime_ms),
    windowMs: toNumber(r.query_uptime_ms),
  };
}

/**
 * `--format table`: for people, the columns that answer "what ran, where, how long", fitted to the width (long
 * times shorten to MM-DD HH:MM and names shrink, then the window's uptime, the start, the total uptime and the names drop, and the lobby id is
 * never cut: it is what `lobby logs` takes next); for scripts, the same columns tab-separated with RFC 3339 times
 * and milliseconds. In chunks, so a large export renders as fast as it is written.
 */
export function* historyTableChunks(rows: readonly HistoryRow[], o: ViewOptions & { wide?: boolean }): Generator<string> {
  if (!o.tty) {
    const iso = (ms: number | null) => (ms === null ? '-' : formatTime(ms, { local: false }));
    const num = (v: number | null) => (v === null ? '-' : v);
    const at = (i: number) => {
      const r = rows[i];
      return r && [r.lobbyId, r.mode, r.region, iso(r.start), iso(r.stop), num(r.totalMs), num(r.windowMs)];
    };
    yield* tableChunks({ head: [], rows: { length: rows.length, at } }, o);
    return;
  }
  const c = paint(o);
  if (rows.length === 0) {
    yield c.dim('No lobbies ran in this window.') + '\n';
    return;
  }
  const head = ['LOBBY', 'GAME MODE', 'REGION', 'STARTED', 'STOPPED', 'UPTIME', 'IN WINDOW'];
  const style = timeStyle(o);
  const running = c.green('running');
  // Cells are made per row as the table measures and writes it, not held for all rows at once.
  const build = (form: 'datetime' | 'short') => (i: number) => {
    const r = rows[i];
    return (
      r && [
        r.lobbyId,
        r.mode,
        r.region,
        r.start === null ? '-' : formatTime(r.start, style, form),
        r.stop === null ? running : formatTime(r.stop, style, form),
        r.totalMs === null ? '-' : formatDuration(r.totalMs),
        r.windowMs === null ? '-' : formatDuration(r.windowMs),
      ]
    );
  };
  // The long time form only when every column fits with it: the natural widths, counted in one pass.
  const natural = head.map((h) => h.length);
  natural[3] = Math.max(natural[3]!, 19);
  natural[4] = Math.max(natural[4]!, 19);
  natural[5] = Math.max(natural[5]!, 8);
  natural[6] = Math.max(natural[6]!, 8);
  for (const r of rows) {
    if (r.lobbyId.length > natural[0]!) natural[0] = r.lobbyId.length;
    if (r.mode.length > natural[1]!) natural[1] = r.mode.length;
    if (r.region.length > natural[2]!) natural[2] = r.region.length;
  }
  const fits = natural.reduce((a, b) => a + b, 0) + 2 * (head.length - 1) <= o.columns - 1;
  const cells = { length: rows.length, at: build(o.wide || fits ? 'datetime' : 'short') };
  const zone = o.utc ? 'UTC' : `local time (${zoneLabel(o.now, false)})`;
  yield* tableChunks({ head, rows: cells, right: [5, 6], keep: [0], shrink: [1, 2], drop: [6, 3, 5, 2, 1] }, o);
  yield c.dim(`${formatCount(rows.length)} lobb${rows.length === 1 ? 'y' : 'ies'} · times in ${zone}`) + '\n';
}
