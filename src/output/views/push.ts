// What `build push` prints: its result, or what a dry run would send. Records, not tables: a push (in CI, -q or
// --json more often than not) loads no table renderer (cli-table3 and its width tables, about 30 ms of CPU).
import type { BaseContext } from '../../base-context.js';
import type { PushResult } from '../../upload/session.js';
import { styler } from '../color.js';
import { formatBytes, formatDuration, formatRate } from '../format.js';
import { renderRecord } from '../record.js';

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
