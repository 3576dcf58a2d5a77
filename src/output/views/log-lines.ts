// A lobby's log lines (cloud.games.matchmaker.getLobbyLogs) for `lobby logs`: the service's answers checked and
// decoded into entries, the two streams merged in time, and each entry written for a person (its time, the line
// sanitised), a script (the line alone, or after its time with --timestamps) or JSON.
import type { LobbyLogLinesResponse, LogStream } from '../../api/types.js';
import { ResponseError } from '../../errors.js';
import { formatTime, parseTimestamp } from '../format.js';
import { sanitize, sanitizeLine } from '../sanitize.js';
import { paint, timeStyle, type ViewOptions } from './options.js';

/** One line of a lobby's output, as the CLI shows it. */
export interface LogEntry {
  stream: LogStream;
  /** The service's timestamp as sent; undefined when the answer has fewer timestamps than lines. */
  ts: string | undefined;
  /** The moment in nanoseconds since the epoch, for ordering; undefined when the timestamp does not parse. */
  ns: bigint | undefined;
  /** The line: decoded from base64, or as sent when it is not base64. */
  text: string;
  /** The line was not base64 (the service's answer is at fault): shown as sent. */
  notBase64?: true;
}

/**
 * The answer's shape, as far as the CLI relies on it: `lines` and `timestamps` lists of strings and a string
 * `watch.index`. Anything else is a one-line ResponseError (exit 1). What the spec allows but nobody expects (lines
 * that are not base64, fewer timestamps than lines, timestamps that do not parse, an odd index) is shown, not refused.
 */
export function checkLogLines(value: unknown): LobbyLogLinesResponse {
  const fail = (what: string) => new ResponseError(`the service's log lines are unusable: ${what}`);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw fail('the answer is not an object');
  const v = value as Partial<Record<keyof LobbyLogLinesResponse, unknown>>;
  if (!Array.isArray(v.lines)) throw fail('`lines` is not a list');
  if (!Array.isArray(v.timestamps)) throw fail('`timestamps` is not a list');
  // A loop, not .every with a closure per call: answers of a million lines stay quick.
  for (const l of v.lines) if (typeof l !== 'string') throw fail('`lines` holds something other than text');
  for (const t of v.timestamps) if (typeof t !== 'string') throw fail('`timestamps` holds something other than text');
  const watch = v.watch as { index?: unknown } | null | undefined;
  if (watch === null || typeof watch !== 'object' || typeof watch.index !== 'string') throw fail('`watch.index` is not text');
  return value as LobbyLogLinesResponse;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const RFC3339 = /^(\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d)(?:\.(\d{1,9})\d*)?([Zz]|[+-]\d\d:?\d\d)$/;

/** Whether `text` is base64 as the service writes it (padded, or without its padding). */
function isBase64(text: string): boolean {
  return text.length % 4 !== 1 && BASE64.test(text) && (text.length % 4 === 0 || !text.endsWith('='));
}

// The last whole second read, in ns: a log's timestamps share their second, line after line.
let lastSecond: { text: string; ns: bigint | undefined } = { text: '', ns: undefined };

/** An RFC 3339 time in nanoseconds since the epoch (the service's have nanoseconds); undefined when it does not parse. */
export function timestampNs(text: string): bigint | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const second = m[1]! + m[3]!;
  if (second !== lastSecond.text) {
    const zone = m[3]!.length === 5 ? `${m[3]!.slice(0, 3)}:${m[3]!.slice(3)}` : m[3]!;
    // parseTimestamp: a leap second (23:59:60) is a time too.
    const ms = parseTimestamp(`${m[1]!.replace(/[t ]/, 'T')}${zone}`);
    lastSecond = { text: second, ns: Number.isNaN(ms) ? undefined : BigInt(ms) * 1_000_000n };
  }
  if (lastSecond.ns === undefined) return undefined;
  return m[2] === undefined ? lastSecond.ns : lastSecond.ns + BigInt(m[2].padEnd(9, '0'));
}

/** The entries of one answer, oldest first (as the service sends them). */
export function logEntries(stream: LogStream, res: LobbyLogLinesResponse): LogEntry[] {
  const out: LogEntry[] = new Array(res.lines.length);
  for (let i = 0; i < res.lines.length; i++) {
    const line = res.lines[i]!;
    const ts = res.timestamps[i];
    const ns = ts === undefined ? undefined : timestampNs(ts);
    out[i] = isBase64(line) ? { stream, ts, ns, text: Buffer.from(line, 'base64').toString('utf8') } : { stream, ts, ns, text: line, notBase64: true };
  }
  return out;
}

/** Two streams' entries in one list by time; an entry whose time is unknown keeps its place in its own stream. */
export function mergeEntries(a: LogEntry[], b: LogEntry[]): LogEntry[] {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  const out: LogEntry[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    if (x.ns === undefined || y.ns === undefined || x.ns <= y.ns) out.push(a[i++]!);
    else out.push(b[j++]!);
  }
  while (i < a.length) out.push(a[i++]!);
  while (j < b.length) out.push(b[j++]!);
  return out;
}

export interface LogLineOptions extends ViewOptions {
  /** Each line after its time (always on a terminal). */
  timestamps: boolean;
  /** Both streams are shown: a person sees which line came from stderr. */
  both: boolean;
}

/** The line itself, safe for a terminal and on one line: control sequences removed, tabs kept. */
const lineText = (e: LogEntry) => sanitize(e.text).replace(/\n/g, ' ');

/** A time on a terminal: `10:42:03.127` (local, or UTC with --utc); a time that does not parse, as sent. */
function clock(e: LogEntry, o: ViewOptions): string {
  if (e.ts === undefined) return '-';
  if (e.ns === undefined) return sanitizeLine(e.ts) || '-';
  const ms = Number(e.ns / 1_000_000n);
  return `${formatTime(ms, timeStyle(o), 'clock')}.${String(ms % 1000).padStart(3, '0')}`;
}

/** Entries as text: on a terminal each after its time, stderr's marked when both streams show; piped the line alone (or `time<TAB>line`). */
export function formatLogEntries(entries: readonly LogEntry[], o: LogLineOptions): string {
  const parts: string[] = [];
  if (o.tty) {
    const c = paint(o);
    const err = c.red('err ');
    for (const e of entries) parts.push(`${c.dim(clock(e, o))} ${o.both && e.stream === 'std_err' ? err : ''}${lineText(e)}\n`);
  } else if (o.timestamps) {
    for (const e of entries) parts.push(`${e.ts === undefined ? '-' : sanitizeLine(e.ts) || '-'}\t${lineText(e)}\n`);
  } else {
    for (const e of entries) parts.push(lineText(e) + '\n');
  }
  return parts.join('');
}

/** An entry for --json: the stream in the service's words, its timestamp as sent, the line as decoded. */
export function logEntryJson(e: LogEntry): { stream: LogStream; ts: string | null; line: string } {
  return { stream: e.stream, ts: e.ts ?? null, line: e.text };
}

/**
 * JSON text in which DEL and the C1 controls are escaped too (JSON.stringify escapes only C0): 0x9b alone is a CSI
 * to many terminals, and a line's JSON may well be read on one. They occur only inside strings, so `\u009b` is the
 * same JSON.
 */
export function safeJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(/[\x7f-\x9f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** --follow --json: a JSON line per entry. */
export function logEntryLines(entries: readonly LogEntry[]): string {
  return entries.map((e) => safeJson(logEntryJson(e)) + '\n').join('');
}

/**
 * The heading between the summary and the lines, on a terminal. `count` is how many lines follow it; a follow
 * passes none, since its lines are yet to come and "no lines" would be false the moment the first one does.
 */
export function logHeading(o: ViewOptions, what: string, count?: number): string {
  const c = paint(o);
  return `\n${c.bold('Logs')}  ${c.dim(count === 0 ? `${what}: no lines` : what)}\n`;
}
