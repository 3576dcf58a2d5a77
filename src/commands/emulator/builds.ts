// `gamehost emulator builds`: the builds an emulator holds, newest first.
import type { Context } from '../../context.js';
import { styler } from '../../output/color.js';
import { formatBytes, formatTime } from '../../output/format.js';
import { writeJson } from '../../output/json.js';
import { sanitizeLine } from '../../output/sanitize.js';
import { renderTable } from '../../output/table.js';
import { emulatorPlace, type EmulatorPlace } from './local.js';

export interface EmulatorBuild {
  build_id: string;
  image_tag: string;
  display_name: string;
  kind: string;
  compression: string;
  content_length: number;
  sha256: string | null;
  complete: boolean;
  create_ts: string;
}

export interface BuildsOptions {
  place: EmulatorPlace;
  /** Every column at full width (--wide). */
  wide: boolean;
}

export function parse(_args: string[], opts: Record<string, unknown>, ctx: Context): BuildsOptions {
  return { place: emulatorPlace(opts, ctx), wide: opts.wide === true };
}

export async function run(ctx: Context, o: BuildsOptions): Promise<void> {
  const builds = o.place.kind === 'endpoint' ? await listThroughEndpoint(ctx) : await listInDataDir(o.place.dir);
  if (ctx.global.json) return writeJson(ctx, { builds });
  // -q: the build ids alone, one a line, newest first.
  if (ctx.global.quiet) return void ctx.io.stdout.write(builds.map((b) => sanitizeLine(b.build_id) + '\n').join(''));
  ctx.io.stdout.write(renderBuilds(ctx, builds, o.wide));
}

async function listInDataDir(dir: string): Promise<EmulatorBuild[]> {
  const { listBuilds } = await import('../../emulator/index.js');
  return (await listBuilds(dir)) as unknown as EmulatorBuild[];
}

async function listThroughEndpoint(ctx: Context): Promise<EmulatorBuild[]> {
  const api = await ctx.api();
  const res = await api.call<{ builds: EmulatorBuild[] }>({ method: 'GET', path: '/_emulator/builds', auth: 'none', idempotent: true });
  return res.builds;
}

export function renderBuilds(ctx: Context, builds: EmulatorBuild[], wide = false): string {
  const tty = ctx.io.stdout.isTTY === true;
  if (tty && builds.length === 0) return styler(ctx).dim('No builds yet: push one with `gamehost build push`.') + '\n';
  const rows = builds.map((b) => [
    b.build_id,
    b.image_tag,
    b.display_name,
    tty ? formatBytes(b.content_length) : b.content_length,
    b.complete ? 'complete' : 'uploading',
    formatTime(b.create_ts, { local: tty }),
    // A terminal shows the start of the hash, as git shows commits; scripts get all of it.
    b.sha256 === null ? '-' : tty ? b.sha256.slice(0, 12) : b.sha256,
  ]);
  // The build id is what the next command takes: never cut; names shrink, then hash, time, name and size go.
  const spec = { head: ['BUILD', 'TAG', 'NAME', 'SIZE', 'STATE', 'CREATED', 'SHA-256'], rows, right: [3], keep: [0], shrink: [1, 2], drop: [6, 5, 2, 3] };
  return renderTable(ctx, spec, ctx.io.stdout, wide);
}
