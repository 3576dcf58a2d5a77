// Views of one lobby: the answer to `lobby create`, and its status, timeline and metrics for `lobby logs`.
import type { Context } from '../../context.js';
import type { CreateLobbyResponse, JobMetrics, JoinPort, LobbyLogsResponse } from '../../api/types.js';
import { styler } from '../color.js';
import { formatBytes, formatDuration, formatTime, type TimeStyle } from '../format.js';
import { renderRecord, type Field } from '../record.js';
import { sanitizeLine } from '../sanitize.js';
import { renderTable } from '../table.js';

export function portAddress(p: JoinPort): string {
  if (p.port_range) return `${p.hostname}:${p.port_range.min}-${p.port_range.max}`;
  if (p.host) return p.host;
  return p.port != null ? `${p.hostname}:${p.port}` : p.hostname;
}

export function renderCreatedLobby(ctx: Context, res: CreateLobbyResponse): string {
  const out = ctx.io.stdout;
  const ports = Object.entries(res.ports).sort(([a], [b]) => a.localeCompare(b));
  const region = `${res.lobby.region.display_name} (${res.lobby.region.region_id})`;
  if (out.isTTY !== true) {
    const fields: Field[] = [
      { label: 'Lobby', key: 'lobby_id', value: res.lobby.lobby_id },
      { label: 'Region', key: 'region', value: res.lobby.region.region_id },
      { label: 'Player token', key: 'player_token', value: res.player.token },
    ];
    const rows = ports.map(([name, p]) => `port\t${sanitizeLine(name)}\t${sanitizeLine(portAddress(p))}\t${p.is_tls ? 'tls' : 'tcp'}\n`);
    return renderRecord(ctx, fields) + rows.join('');
  }
  const c = styler(ctx, out);
  let text = `${c.green('✓')} Created lobby ${c.bold(res.lobby.lobby_id)} in ${sanitizeLine(region)}\n`;
  text += renderRecord(ctx, [{ label: 'Player token', key: 'player_token', value: res.player.token }]);
  if (ports.length) {
    text += '\n' + renderTable(ctx, {
      head: ['PORT', 'ADDRESS', 'TLS'],
      rows: ports.map(([name, p]) => [name, portAddress(p), p.is_tls ? 'yes' : 'no']),
    });
  }
  return text;
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

export function summarize(values: number[]): SeriesSummary | undefined {
  if (values.length === 0) return undefined;
  return {
    now: values[values.length - 1]!,
    peak: Math.max(...values),
    mean: values.reduce((a, b) => a + b, 0) / values.length,
  };
}

const pct = (v: number) => `${v.toFixed(1)}%`;
const mib = (bytes: number) => formatBytes(bytes);

interface Step {
  name: string;
  ts?: string | null;
}

function steps(res: LobbyLogsResponse): Step[] {
  const l = res.lobby;
  return [
    { name: 'created', ts: l.create_ts },
    { name: 'started', ts: l.start_ts },
    { name: 'ready', ts: l.ready_ts },
    { name: 'stopped', ts: l.status.stopped?.stop_ts },
  ];
}

function metricFields(m: JobMetrics): Field[] {
  const fields: Field[] = [{ label: 'Job', key: 'job', value: m.job }];
  const cpu = summarize(m.cpu);
  const mem = summarize(m.memory ?? []);
  if (cpu) {
    fields.push({ label: 'CPU', key: 'cpu', value: `now ${pct(cpu.now)}  peak ${pct(cpu.peak)}  mean ${pct(cpu.mean)}` });
  }
  if (mem) {
    const of = m.allocated_memory ? `  of ${formatBytes(m.allocated_memory * 1024 * 1024)} allocated` : '';
    fields.push({ label: 'Memory', key: 'memory', value: `now ${mib(mem.now)}  peak ${mib(mem.peak)}  mean ${mib(mem.mean)}${of}` });
  }
  return fields;
}

export function renderLobbyLogs(ctx: Context, res: LobbyLogsResponse): string {
  const out = ctx.io.stdout;
  const l = res.lobby;
  const state = lobbyState(res);
  const stopped = l.status.stopped;
  const tty = out.isTTY === true;
  const style: TimeStyle = { local: tty };
  if (!tty) {
    const fields: Field[] = [
      { label: 'Lobby', key: 'lobby_id', value: l.lobby_id },
      { label: 'Status', key: 'status', value: state },
    ];
    if (stopped) fields.push({ label: 'Exit code', key: 'exit_code', value: stopped.exit_code });
    fields.push(
      { label: 'Game mode', key: 'game_mode', value: l.lobby_group_name_id },
      { label: 'Region', key: 'region_id', value: l.region_id },
      { label: 'Namespace', key: 'namespace_id', value: l.namespace_id },
    );
    for (const s of steps(res)) if (s.ts) fields.push({ label: s.name, key: `${s.name}_ts`, value: formatTime(s.ts, style) });
    if (res.metrics) {
      const cpu = summarize(res.metrics.cpu);
      const mem = summarize(res.metrics.memory ?? []);
      fields.push({ label: 'Job', key: 'job', value: res.metrics.job });
      if (cpu) fields.push({ label: '', key: 'cpu_percent_now', value: cpu.now }, { label: '', key: 'cpu_percent_peak', value: cpu.peak });
      if (mem) fields.push({ label: '', key: 'memory_bytes_now', value: mem.now }, { label: '', key: 'memory_bytes_peak', value: mem.peak });
      if (res.metrics.allocated_memory != null) fields.push({ label: '', key: 'allocated_memory_mb', value: res.metrics.allocated_memory });
    }
    return renderRecord(ctx, fields);
  }

  const c = styler(ctx, out);
  const badge =
    state === 'running'
      ? c.green('● running')
      : state === 'failed'
        ? c.red(`✖ failed (exit code ${stopped!.exit_code})`)
        : c.dim(`■ stopped (exit code ${stopped!.exit_code})`);
  const created = Date.parse(l.create_ts);
  const end = stopped ? Date.parse(stopped.stop_ts) : ctx.now();
  let text = `Lobby ${c.bold(l.lobby_id)}  ${badge}\n`;
  text += renderRecord(ctx, [
    { label: 'Game mode', key: 'game_mode', value: l.lobby_group_name_id },
    { label: 'Region', key: 'region_id', value: l.region_id },
    { label: 'Namespace', key: 'namespace_id', value: l.namespace_id },
    { label: stopped ? 'Lifetime' : 'Age', key: 'age', value: formatDuration(end - created) },
  ]);

  text += `\n${c.bold('Timeline')}\n`;
  let previous: number | undefined;
  const rows: string[][] = [];
  for (const s of steps(res)) {
    if (!s.ts) {
      if (s.name !== 'stopped') rows.push([s.name, c.dim('pending'), '']);
      continue;
    }
    const at = Date.parse(s.ts);
    rows.push([s.name, formatTime(s.ts, style), previous === undefined ? '' : `+${formatDuration(at - previous)}`]);
    previous = at;
  }
  const nameWidth = Math.max(...rows.map((r) => r[0]!.length));
  const timeWidth = Math.max(...rows.map((r) => r[1]!.length));
  for (const r of rows) text += `  ${r[0]!.padEnd(nameWidth)}  ${r[1]!.padEnd(timeWidth)}  ${c.dim(r[2]!)}`.trimEnd() + '\n';

  if (res.metrics) {
    text += `\n${c.bold('Metrics')}\n`;
    text += renderRecord(ctx, metricFields(res.metrics)).replace(/^/gm, '  ');
  }
  return text;
}
