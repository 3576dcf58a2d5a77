// `gamehost emulator builds`: the builds an emulator holds, newest first.
import { listEmulatorBuilds } from '../../api/operations.js';
import type { EmulatorBuild } from '../../api/types.js';
import type { Context } from '../../context.js';
import { writeJson } from '../../output/json.js';
import { defineCommand } from '../command.js';
import { DATA_DIR_OPTION, adminApi, emulatorPlace, type EmulatorPlace } from './local.js';

export interface BuildsOptions {
  place: EmulatorPlace;
}

export default defineCommand({
  summary: 'List the builds the emulator holds, newest first',
  options: [DATA_DIR_OPTION],
  examples: [
    'gamehost emulator builds',
    'gamehost emulator builds --json | jq -r \'.builds[] | select(.complete) | .image_tag\'   # in CI',
    'gamehost emulator builds --endpoint http://127.0.0.1:6420   # a running emulator serve',
  ],
  parse: (v, ctx): BuildsOptions => ({ place: emulatorPlace(v.dataDir, ctx) }),
  run,
});

async function run(ctx: Context, o: BuildsOptions): Promise<void> {
  const api = await adminApi(ctx, o.place);
  const { builds } = api ? await listEmulatorBuilds(api) : { builds: [] };
  if (ctx.global.json) return writeJson(ctx, { builds });
  ctx.io.stdout.write(await renderBuilds(ctx, builds));
}

async function renderBuilds(ctx: Context, builds: EmulatorBuild[]): Promise<string> {
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
  return renderTable(ctx, { head: ['BUILD', 'TAG', 'NAME', 'SIZE', 'STATE', 'CREATED', 'SHA-256'], rows, right: [3] });
}
