// Views of one lobby: the answer to `lobby create`, and its status, timeline and metrics for `lobby logs`.
import type { BaseContext } from '../../base-context.js';
import type { CreateLobbyResponse, GetGameResponse, JobMetrics, JoinPort, LobbyLogsResponse } from '../../api/types.js';
import { lineChart, niceScale, sparkline } from '../chart.js';
import { formatCount, formatDuration, formatMiB, formatOffset, formatShare, formatTime, maxOf, meanOf, minOf, parseTimestamp, visibleWidth } from '../format.js';
import { formatRecord, keyValues, labelled, type Field } from '../record.js';
import { sanitizeLine } from '../sanitize.js';
import { formatTable } from '../table.js';
import { fit, fitBlock, paint, timeStyle, viewOptions, type ViewOptions } from './options.js';

export function portAddress(p: JoinPort): string {
  if (p.port_range) return `${p.hostname}:${p.port_range.min}-${p.port_range.max}`;
  if (p.host) return p.host;
  return p.port != null ? `${p.hostname}:${p.port}` : p.hostname;
}

/**
 * The answer to `lobby create`: for people a short headline, the lobby id and the player token each whole (the
 * token alone on its line when it is long, so it copies in one go), then the ports; for scripts key/value lines
 * and a line per port.
 */
export function formatCreatedLobby(res: CreateLobbyResponse, o: ViewOptions, verb = 'Created'): string {
  const ports = Object.entries(res.ports).sort(([a], [b]) => a.localeCompare(b));
  const region = res.lobby.region;
  if (!o.tty) {
    const fields: Field[] = [
      { label: 'Lobby', key: 'lobby_id', value: res.lobby.lobby_id },
      { label: 'Region', key: 'region', value: region.region_id },
      { label: 'Player token', key: 'player_token', value: res.player.token },
    ];
    const rows = ports.map(([name, p]) => `port\t${sanitizeLine(name)}\t${sanitizeLine(portAddress(p))}\t${p.is_tls ? 'tls' : 'tcp'}\n`);
    return formatRecord(fields, o) + rows.join('');
  }
  const c = paint(o);
  let text = fit(`${c.green('✓')} ${verb} a lobby in ${sanitizeLine(region.display_name)}`, o) + '\n';
  text += formatRecord(
    [
      { label: 'Lobby', key: 'lobby_id', value: res.lobby.lobby_id },
      { label: 'Region', key: 'region', value: `${region.display_name} (${region.region_id})`, whole: false },
      { label: 'Player token', key: 'player_token', value: res.player.token },
    ],
    o,
  );
  if (ports.length) {
    text += '\n' + formatTable({ head: ['PORT', 'ADDRESS', 'TLS'], rows: ports.map(([name, p]) => [name, portAddress(p), p.is_tls ? 'yes' : 'no']) }, o);
  }
  return text;
}

export function renderCreatedLobby(ctx: BaseContext, res: CreateLobbyResponse, verb = 'Created'): string {
  return formatCreatedLobby(res, viewOptions(ctx, ctx.io.stdout, false), verb);
}

export type LobbyState = 'running' | 'stopped' | 'failed';

export function lobbyState(res: LobbyLogsResponse): LobbyState {
  const stopped = res.lobby.status.stopped;
  if (!stopped) return 'running';
  return stopped.failed ? 'failed' : 'stopped';
}

export interface SeriesSummary {
  now: number;
  peak: number;
  mean: number;
}

/** The latest, highest and mean sample; non-finite samples (a JSON `1e999` parses as Infinity) are left out. */
export function summarize(values: readonly number[]): SeriesSummary | undefined {
  const mean = meanOf(values);
  if (mean === undefined) return undefined;
  let now = 0;
  for (let i = values.length - 1; i >= 0; i--) {
    if (Number.isFinite(values[i])) {
      now = values[i]!;
      break;
    }
  }
  return { now, peak: maxOf(values), mean };
}

const STEPS = ['created', 'started', 'ready', 'stopped'] as const;
type StepName = (typeof STEPS)[number];

interface Step {
  name: StepName;
  /** ms since the epoch; undefined: not yet, or never. */
  at?: number;
  /** The service's text when it is not a time: shown as given, and reached, but not counted with. */
  raw?: string;
}

/** Each step of the lifecycle and when it was reached. */
function steps(res: LobbyLogsResponse): Step[] {
  const l = res.lobby;
  const step = (name: StepName, ts?: string | null): Step => {
    if (!ts) return { name };
    const at = parseTimestamp(ts);
    return Number.isNaN(at) ? { name, raw: sanitizeLine(String(ts)) } : { name, at };
  };
  return [step('created', l.create_ts), step('started', l.start_ts), step('ready', l.ready_ts), step('stopped', l.status.stopped?.stop_ts)];
}

const reached = (s: Step) => s.at !== undefined || s.raw !== undefined;

/** The time since `from` (ms, NaN when the service's time did not parse), or `-`. */
const since = (to: number, from: number) => (Number.isFinite(to - from) ? formatDuration(Math.max(0, to - from)) : '-');

/** The last step reached: where the lobby is in its lifecycle. */
export function currentStep(res: LobbyLogsResponse): StepName {
  const done = steps(res).filter(reached);
  return done.length ? done[done.length - 1]!.name : 'created';
}

/** A sample for people: `42.5`, and `1.80e+308` for one too large to write out. */
const num = (v: number, digits = 1) => (Math.abs(v) >= 1e9 ? v.toExponential(2) : Number.isInteger(v) ? String(v) : v.toFixed(digits));
const pct = (v: number) => `${Math.abs(v) >= 1e9 || !Number.isInteger(v) ? num(v) : v.toFixed(1)}%`;
/** allocated_memory is in MB as Nomad counts them, which are MiB. */
const allocatedBytes = (m: JobMetrics) => {
  const bytes = (m.allocated_memory ?? 0) * 1024 * 1024;
  return bytes > 0 && Number.isFinite(bytes) ? bytes : undefined;
};

/** A region's names by its UUID (lower-cased), as the game lists them: what `lobby create` calls the region. */
export type RegionNames = ReadonlyMap<string, { name_id: string; display_name: string }>;

/** The game's regions by UUID; entries the spec would not allow (no id, no names) are left out, never fatal. */
export function regionNames(res: GetGameResponse): RegionNames {
  const names = new Map<string, { name_id: string; display_name: string }>();
  const regions: unknown = res?.game?.available_regions;
  if (!Array.isArray(regions)) return names;
  for (const r of regions as Partial<Record<string, unknown>>[]) {
    if (!r || typeof r.region_id !== 'string' || typeof r.region_name_id !== 'string' || typeof r.region_display_name !== 'string') continue;
    names.set(r.region_id.toLowerCase(), { name_id: r.region_name_id, display_name: r.region_display_name });
  }
  return names;
}

export interface LobbyViewOptions extends ViewOptions {
  /** Line charts with axes instead of sparklines (--chart). */
  chart: boolean;
  /**
   * Metrics seen earlier in a watch, shown when the answer has none: a stopped lobby reports no metrics, and
   * the last ones before the stop are often why it stopped.
   */
  lastSeen?: { metrics: JobMetrics; at: number };
  /** The game's regions, when the service told them: the region is shown by name rather than by UUID. */
  regions?: RegionNames;
}

/** The names of the lobby's region, when the game's regions are known and list it. */
const regionOf = (res: LobbyLogsResponse, o: LobbyViewOptions) => o.regions?.get(String(res.lobby.region_id).toLowerCase());

/** `lobby logs`: the status, the lifecycle timeline and the job's metrics, for a person or a script. */
export function formatLobbyLogs(res: LobbyLogsResponse, o: LobbyViewOptions): string {
  return o.tty ? renderForPeople(res, o) : renderForScripts(res, o);
}

function renderForScripts(res: LobbyLogsResponse, o: LobbyViewOptions): string {
  const l = res.lobby;
  const stopped = l.status.stopped;
  const style = timeStyle(o);
  const created = parseTimestamp(l.create_ts);
  const rows: [string, string | number | null][] = [
    ['lobby_id', l.lobby_id],
    ['status', lobbyState(res)],
  ];
  if (stopped) rows.push(['exit_code', stopped.exit_code]);
  rows.push(['game_mode', l.lobby_group_name_id], ['region_id', l.region_id]);
  // The region's name id, as `lobby create` prints it, when the game's regions name it.
  const region = regionOf(res, o);
  if (region) rows.push(['region', region.name_id]);
  rows.push(['namespace_id', l.namespace_id]);
  for (const s of steps(res)) if (reached(s)) rows.push([`${s.name}_ts`, s.raw ?? formatTime(s.at!, style)]);
  rows.push(['age_ms', Number.isFinite(created) ? Math.max(0, o.now - created) : null]);
  const m = res.metrics;
  if (m) {
    rows.push(['job', m.job]);
    const cpu = summarize(m.cpu);
    const mem = summarize(m.memory ?? []);
    if (cpu) rows.push(['cpu_percent_now', cpu.now], ['cpu_percent_peak', cpu.peak], ['cpu_percent_mean', round2(cpu.mean)]);
    if (mem) rows.push(['memory_bytes_now', mem.now], ['memory_bytes_peak', mem.peak], ['memory_bytes_mean', Math.round(mem.mean)]);
    if (m.allocated_memory != null) rows.push(['allocated_memory_mb', m.allocated_memory]);
  }
  return keyValues(rows);
}

// Beyond 1e15 a double has no hundredths to round (and v * 100 could overflow).
const round2 = (v: number) => (Math.abs(v) >= 1e15 ? v : Math.round(v * 100) / 100);

function renderForPeople(res: LobbyLogsResponse, o: LobbyViewOptions): string {
  const c = paint(o);
  const l = res.lobby;
  const state = lobbyState(res);
  const stopped = l.status.stopped;
  const badge =
    state === 'running'
      ? c.green('● running')
      : state === 'failed'
        ? c.red(`✖ failed (exit code ${stopped!.exit_code})`)
        : c.dim(`■ stopped (exit code ${stopped!.exit_code})`);
  const created = parseTimestamp(l.create_ts);
  // As `lobby create` said it, `Atlanta (lnd-atl)`, when the game's regions name it; else the service's id.
  const region = regionOf(res, o);
  const facts: [string, string][] = [
    ['Game mode', sanitizeLine(l.lobby_group_name_id)],
    ['Region', region ? `${sanitizeLine(region.display_name)} (${sanitizeLine(region.name_id)})` : sanitizeLine(l.region_id)],
    ['Namespace', sanitizeLine(l.namespace_id)],
    ['Age', since(o.now, created)],
  ];
  if (stopped) facts.push(['Lifetime', since(parseTimestamp(stopped.stop_ts), created)]);

  // The id is never cut: when it and the badge do not fit on one line, the badge goes under it.
  const id = `Lobby ${c.bold(sanitizeLine(l.lobby_id))}`;
  const header = visibleWidth(`${id}  ${badge}`) <= o.columns - 1 ? `${id}  ${badge}` : `${id}\n${fit(badge, o)}`;
  let text = labelled(o, facts);
  text += `\n${c.bold('Timeline')}\n` + timeline(res, o);
  text += '\n' + metrics(res, o);
  return `${header}\n${fitBlock(text, o)}`;
}

/** created → started → ready → stopped: when each step was reached and how long it took to get there. */
function timeline(res: LobbyLogsResponse, o: ViewOptions): string {
  const c = paint(o);
  const all = steps(res);
  const lastReached = all.reduce((i, s, at) => (reached(s) ? at : i), 0);
  const rows: [string, string, string][] = [];
  let previous: number | undefined;
  all.forEach((s, i) => {
    if (s.raw !== undefined) {
      // Not a time: shown as the service sent it, and the next step's delay is not counted from it.
      rows.push([s.name, s.raw, '']);
      previous = undefined;
    } else if (s.at !== undefined) {
      // Times out of order (a clock skew) read as a negative offset, never `+-1h`.
      rows.push([s.name, formatTime(s.at, timeStyle(o)), previous === undefined ? '' : formatOffset(s.at - previous)]);
      previous = s.at;
    } else if (i < lastReached) {
      // A lobby can stop before it ever started or became ready.
      rows.push([s.name, c.dim('never'), '']);
    } else if (i === lastReached + 1) {
      const so = previous === undefined ? '' : formatDuration(Math.max(0, o.now - previous));
      // The step not reached yet: a running lobby has not stopped, it has run for a while.
      if (s.name === 'stopped') rows.push([s.name, c.dim('not yet'), so && `running ${so} so far`]);
      else rows.push([s.name, c.dim('pending'), so && `+${so} so far`]);
    } else {
      rows.push([s.name, c.dim('pending'), '']);
    }
  });
  const nameWidth = maxOf(rows.map((r) => r[0].length), 0);
  const timeWidth = maxOf(rows.map((r) => visibleWidth(r[1])), 0);
  return rows
    .map(([name, at, took]) => {
      const pad = ' '.repeat(timeWidth - visibleWidth(at));
      return `  ${name.padEnd(nameWidth)}  ${at}${pad}  ${c.dim(took)}`.trimEnd() + '\n';
    })
    .join('');
}

const hasSamples = (m: JobMetrics | null | undefined): m is JobMetrics =>
  !!m && (m.cpu.length > 0 || (m.memory ?? []).length > 0);

function metrics(res: LobbyLogsResponse, o: LobbyViewOptions): string {
  const c = paint(o);
  const fresh = hasSamples(res.metrics);
  const running = lobbyState(res) === 'running';
  const m = fresh ? res.metrics! : o.lastSeen?.metrics;
  if (!hasSamples(m)) {
    // Said plainly: a started, running lobby with no metrics at all has no server that is measured (the emulator's
    // lobby that nothing runs); else the answer held no samples (for a lobby that ran, the service keeps none to show).
    const none = !running
      ? 'none: the service sent no samples for this lobby'
      : res.metrics == null && res.lobby.start_ts != null
        ? 'none: no server of this lobby is measured'
        : 'none reported yet';
    const job = res.metrics?.job ? `${sanitizeLine(res.metrics.job)}: ` : '';
    return `${c.bold('Metrics')}  ${c.dim(job + none)}\n`;
  }
  // The latest sample is "now" only for a running lobby in this answer; else it is the last one there was.
  const latest = fresh && running ? 'now' : 'last';
  const memory = m.memory ?? [];
  const cpu = summarize(m.cpu);
  const mem = summarize(memory);
  const allocated = allocatedBytes(m);
  const rows: { label: string; numbers: string; values: readonly number[]; max: number }[] = [];
  if (cpu) {
    rows.push({
      label: 'CPU',
      numbers: `${latest} ${pct(cpu.now)}  peak ${pct(cpu.peak)}  mean ${pct(cpu.mean)}`,
      values: m.cpu,
      // Percent of one core: a job using more than one core goes past 100.
      max: Math.max(100, cpu.peak),
    });
  }
  if (mem) {
    const share = allocated ? ` (${formatShare(mem.now, allocated)})` : '';
    const of = allocated ? `  of ${formatMiB(allocated)}` : '';
    rows.push({
      label: 'Memory',
      numbers: `${latest} ${formatMiB(mem.now)}${share}  peak ${formatMiB(mem.peak)}  mean ${formatMiB(mem.mean)}${of}`,
      values: memory,
      max: allocated ?? mem.peak,
    });
  }

  const seen = fresh ? '' : `, last seen ${formatTime(o.lastSeen!.at, timeStyle(o), 'clock')}`;
  let text = `${c.bold('Metrics')}  ${c.dim(sanitizeLine(m.job) + seen)}\n`;
  const labelWidth = maxOf(rows.map((r) => r.label.length), 0);
  const indent = 2 + labelWidth + 2;
  if (o.chart) {
    for (const r of rows) text += `  ${c.dim(r.label.padEnd(labelWidth))}  ${r.numbers}\n`;
    return text + charts(res, o, m, allocated, fresh);
  }
  // Sparklines beside the numbers when every row fits, else each on its own line under its numbers.
  const spark = (r: (typeof rows)[number], width: number) =>
    c.cyan(sparkline(r.values, { width, scale: { min: 0, max: r.max } }));
  const widest = maxOf(rows.map((r) => Math.min(r.values.length, 30)), 0) + 2 + maxOf(rows.map((r) => r.numbers.length), 0);
  if (indent + widest <= o.columns - 1) {
    for (const r of rows) {
      text += `  ${c.dim(r.label.padEnd(labelWidth))}  ${spark(r, 30)}${' '.repeat(sparkPad(rows, r))}  ${r.numbers}\n`;
    }
  } else {
    const width = Math.max(4, Math.min(30, o.columns - 1 - indent));
    for (const r of rows) {
      text += `  ${c.dim(r.label.padEnd(labelWidth))}  ${r.numbers}\n`;
      text += `${' '.repeat(indent)}${spark(r, width)}\n`;
    }
  }
  return text;
}

/** Spaces that line the numbers up when one series has fewer samples than another. */
function sparkPad(rows: { values: readonly number[] }[], row: { values: readonly number[] }): number {
  const longest = maxOf(rows.map((r) => Math.min(r.values.length, 30)), 0);
  return longest - Math.min(row.values.length, 30);
}

const samples = (n: number) => `${formatCount(n)} sample${n === 1 ? '' : 's'}`;

function charts(res: LobbyLogsResponse, o: ViewOptions, m: JobMetrics, allocated: number | undefined, fresh: boolean): string {
  const c = paint(o);
  const width = o.columns - 1 - 2;
  const right = fresh && lobbyState(res) === 'running' ? 'now' : 'last';
  let text = '';
  if (m.cpu.length) {
    const lines = lineChart(m.cpu, {
      height: 5,
      width,
      format: (v) => `${num(v)}%`,
      xLabels: [samples(m.cpu.length), right],
      paint: c.cyan,
    });
    text += `\n  ${c.bold('CPU')} ${c.dim('(% of one core)')}\n` + lines.map((l) => `  ${l}\n`).join('');
  }
  const memory = m.memory ?? [];
  if (memory.length) {
    const mib = memory.map((b) => b / (1024 * 1024));
    const scale = niceScale(minOf(mib), maxOf(mib), 5);
    const lines = lineChart(mib, {
      height: 5,
      width,
      scale,
      format: (v) => (scale.step < 1 ? num(v) : num(Math.round(v))),
      xLabels: [samples(memory.length), right],
      paint: c.magenta,
    });
    const of = allocated ? c.dim(`(MiB of ${formatMiB(allocated)} allocated)`) : c.dim('(MiB)');
    text += `\n  ${c.bold('Memory')} ${of}\n` + lines.map((l) => `  ${l}\n`).join('');
  }
  return text;
}

/**
 * One line for a script watching a lobby: observed time, status, step, exit code, CPU % and memory bytes now,
 * tab-separated, with `-` for a value not known yet (so `read` keeps the fields apart).
 */
export function lobbyChangeLine(res: LobbyLogsResponse, observedAt: number): string {
  return `${formatTime(observedAt, { local: false })}\t${lobbyChangeKey(res)}\n`;
}

/** The part of the change line that, when it differs, makes a change. */
export function lobbyChangeKey(res: LobbyLogsResponse): string {
  const stopped = res.lobby.status.stopped;
  // A stopped lobby uses nothing now, whatever samples of its run the answer still holds.
  const cpu = stopped ? undefined : summarize(res.metrics?.cpu ?? []);
  const mem = stopped ? undefined : summarize(res.metrics?.memory ?? []);
  return [lobbyState(res), currentStep(res), stopped ? stopped.exit_code : '-', cpu ? cpu.now : '-', mem ? mem.now : '-'].join('\t');
}
