// `gamehost emulator builds`: the builds an emulator holds, newest first.
import { listEmulatorBuilds } from '../../api/operations.js';
import type { EmulatorBuild } from '../../api/types.js';
import type { Context } from '../../context.js';
import { writeJson } from '../../output/json.js';
import { defineCommand } from '../command.js';
import { DATA_DIR_OPTION, adminApi, emulatorPlace, type EmulatorPlace } from './local.js';

export interface BuildsOptions {
  place: EmulatorPlace;
  /** Every column at full width (--wide). */
  wide: boolean;
}

export default defineCommand({
  summary: 'List the builds the emulator holds, newest first',
  options: [DATA_DIR_OPTION, { flags: '--wide', description: 'every column at full width, none left out' }],
  notes: 'With -q, prints the build ids alone, one a line.',
  examples: [
    'gamehost emulator builds',
    'gamehost emulator builds --json | jq -r \'.builds[] | select(.complete) | .image_tag\'   # in CI',
    'gamehost emulator builds --endpoint http://127.0.0.1:6420   # a running emulator serve',
  ],
  parse: (v, ctx): BuildsOptions => ({ place: emulatorPlace(v.dataDir, ctx), wide: v.wide }),
  run,
});

async function run(ctx: Context, o: BuildsOptions): Promise<void> {
  const api = await adminApi(ctx, o.place);
  // At a running emulator, the builds of the game the command is pointed at (GAMEHOST_GAME, --game).
  const gameId = o.place.kind === 'endpoint' ? api?.target.gameId : undefined;
  const { builds } = api ? await listEmulatorBuilds(api, gameId) : { builds: [] };
  if (ctx.global.json) return writeJson(ctx, { builds });
  const { sanitizeLine } = await import('../../output/sanitize.js');
  // -q: the build ids alone, one a line, newest first.
  if (ctx.global.quiet) return void ctx.io.stdout.write(builds.map((b) => sanitizeLine(b.build_id) + '\n').join(''));
  ctx.io.stdout.write(await renderBuilds(ctx, builds, o.wide));
}

async function renderBuilds(ctx: Context, builds: EmulatorBuild[], wide: boolean): Promise<string> {
  const [{ styler }, { formatBytes, formatTime }, { renderTable }] = await Promise.all([
    import('../../output/color.js'),
    import('../../output/format.js'),
    import('../../output/table.js'),
  ]);
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
