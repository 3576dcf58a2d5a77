// `gamehost emulator builds`: the builds an emulator holds, newest first.
import { listEmulatorBuilds } from '../../api/operations.js';
import type { Context } from '../../context.js';
import { writeJson } from '../../output/json.js';
import { defineCommand } from '../command.js';
import { DATA_DIR_OPTION, adminApi, adminGameId, emulatorPlace, type EmulatorPlace } from './local.js';

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
  const { builds } = api ? await listEmulatorBuilds(api, await adminGameId(ctx, o.place, api)) : { builds: [] };
  if (ctx.global.json) return writeJson(ctx, { builds });
  const { sanitizeLine } = await import('../../output/sanitize.js');
  // -q: the build ids alone, one a line, newest first.
  if (ctx.global.quiet) return void ctx.io.stdout.write(builds.map((b) => sanitizeLine(b.build_id) + '\n').join(''));
  const [{ formatBuilds }, { viewOptions }] = await Promise.all([import('../../output/views/build.js'), import('../../output/views/options.js')]);
  ctx.io.stdout.write(formatBuilds(builds, { ...viewOptions(ctx, ctx.io.stdout, false), wide: o.wide }));
}
