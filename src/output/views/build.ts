import type { BuildSummary, EmulatorBuild } from '../../api/types.js';
import type { BaseContext } from '../../base-context.js';
import type { PushResult } from '../../upload/session.js';
import { styler } from '../color.js';
import { formatBytes, formatDuration, formatRate, formatTime } from '../format.js';
import { renderRecord } from '../record.js';
import { formatTable } from '../table.js';
import { fit, paint, timeStyle, type ViewOptions } from './options.js';

export function renderPushed(ctx: BaseContext, tag: string, r: PushResult): string {
  // -q: the build id alone, for `BUILD=$(gamehost build push -q …)`.
  if (ctx.global.quiet) return r.build_id + '\n';
  const out = ctx.io.stdout;
  const fields = [
    { label: 'Build', key: 'build_id', value: r.build_id },
    { label: 'Upload', key: 'upload_id', value: r.upload_id },
    { label: 'Tag', key: 'tag', value: tag },
    {
      label: 'Size',
      key: 'bytes',
      value: out.isTTY === true ? `${formatBytes(r.bytes)} in ${r.parts} part${r.parts === 1 ? '' : 's'}` : r.bytes,
    },
    {
      label: 'Time',
      key: 'duration_ms',
      // The rate counts only what this run sent (after a resume, less than the file).
      value: out.isTTY === true ? `${formatDuration(r.duration_ms)} (${formatRate(r.bytes_sent / Math.max(r.duration_ms / 1000, 0.001))})` : r.duration_ms,
    },
    { label: 'SHA-256', key: 'sha256', value: r.sha256 },
  ];
  if (out.isTTY !== true) return renderRecord(ctx, [...fields, { label: 'Parts', key: 'parts', value: r.parts }]);
  const c = styler(ctx, out);
  return `${c.green('✓')} Pushed ${c.bold(tag)}\n` + renderRecord(ctx, fields);
}

export interface DryRunResult {
  dry_run: true;
  kind: string;
  compression: string;
  bytes: number;
  sha256: string;
  parts: number;
  part_size: number;
}

export function renderDryRun(ctx: BaseContext, r: DryRunResult): string {
  const tty = ctx.io.stdout.isTTY === true;
  const fields = [
    { label: 'Kind', key: 'kind', value: r.kind },
    { label: 'Compression', key: 'compression', value: r.compression },
    { label: 'Size', key: 'bytes', value: tty ? `${formatBytes(r.bytes)} (${r.bytes} bytes)` : r.bytes },
    { label: 'SHA-256', key: 'sha256', value: r.sha256 },
    { label: 'Parts', key: 'parts', value: tty ? `${r.parts} of up to ${formatBytes(r.part_size)}` : r.parts },
  ];
  if (!tty) return renderRecord(ctx, fields);
  return `${styler(ctx, ctx.io.stdout).yellow('Dry run:')} nothing was sent\n` + renderRecord(ctx, fields);
}

/**
 * `emulator builds`: a row per build, newest first. Nothing is cut, since builds of one game differ at the end of
 * their tags and names: the build id and the tag stay; the hash, the time, the size, the state and then the name
 * are left out when the row is too wide (and come back, the name first, when they fit in the room the others
 * left). Scripts get every column, the whole hash and the size in bytes.
 */
export function formatBuilds(builds: readonly EmulatorBuild[], o: ViewOptions & { wide?: boolean }): string {
  if (o.tty && builds.length === 0) return fit(paint(o).dim('No builds yet: push one with `gamehost build push`.'), o) + '\n';
  const rows = builds.map((b) => [
    b.build_id,
    b.image_tag,
    b.display_name,
    o.tty ? formatBytes(b.content_length) : b.content_length,
    b.complete ? 'complete' : 'uploading',
    formatTime(b.create_ts, timeStyle(o)),
    // A terminal shows the start of the hash, as git shows commits; scripts get all of it.
    b.sha256 === null ? '-' : o.tty ? b.sha256.slice(0, 12) : b.sha256,
  ]);
  const head = ['BUILD', 'TAG', 'NAME', 'SIZE', 'STATE', 'CREATED', 'SHA-256'];
  return formatTable({ head, rows, right: [3], keep: [0, 1], shrink: [], drop: [6, 5, 3, 4, 2] }, o);
}

/**
 * `build list`: the service's builds, newest first, as `emulator builds` shows the emulator's. The service's build
 * summary has no image tag field: the tag is its `image_tag` tag when it has one. Anything the spec allows may
 * arrive, so a missing field is a `-`, never a crash.
 */
export function formatBuildSummaries(builds: readonly BuildSummary[], o: ViewOptions & { wide?: boolean }): string {
  if (o.tty && builds.length === 0) return fit(paint(o).dim('No builds yet: push one with `gamehost build push`.'), o) + '\n';
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : '-');
  const rows = builds.map((b) => [
    text(b?.build_id),
    text(b?.tags?.image_tag),
    text(b?.display_name),
    typeof b?.content_length !== 'number' ? '-' : o.tty ? formatBytes(b.content_length) : b.content_length,
    b?.complete === true ? 'complete' : b?.complete === false ? 'uploading' : '-',
    typeof b?.create_ts === 'string' ? formatTime(b.create_ts, timeStyle(o)) : '-',
  ]);
  const head = ['BUILD', 'TAG', 'NAME', 'SIZE', 'STATE', 'CREATED'];
  return formatTable({ head, rows, right: [3], keep: [0, 1], shrink: [], drop: [5, 3, 4, 2] }, o);
}
