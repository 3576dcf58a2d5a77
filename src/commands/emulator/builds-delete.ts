// `gamehost emulator builds delete <build-id>…`: removes builds one by one, their records and their bytes (local
// files or the bucket), through the emulator's admin API.
import type { Context } from '../../context.js';
import { parseUuid } from '../args.js';
import { defineCommand } from '../command.js';
import { DATA_DIR_OPTION, adminApi, emulatorPlace, type EmulatorPlace } from './local.js';

export interface BuildsDeleteOptions {
  buildIds: string[];
  place: EmulatorPlace;
}

export default defineCommand({
  operands: ['<build-id...>'],
  summary: 'Delete builds from the emulator: their records and their bytes',
  options: [DATA_DIR_OPTION],
  notes: 'Each build is deleted on its own: an unknown one is said and the others are still deleted (exit 4 then). With -q, prints the ids deleted.',
  examples: [
    'gamehost emulator builds delete "$BUILD"',
    'gamehost emulator builds -q | tail -n +11 | xargs -r gamehost emulator builds delete   # in CI: keep the newest 10',
  ],
  parse: (v, ctx): BuildsDeleteOptions => ({ buildIds: v.buildId.map((id) => parseUuid('the build id', id)), place: emulatorPlace(v.dataDir, ctx) }),
  run,
});

async function run(ctx: Context, o: BuildsDeleteOptions): Promise<number | void> {
  const [{ ApiError, ExitCode }, { writeJson }, { deleteEmulatorBuild }] = await Promise.all([
    import('../../errors.js'),
    import('../../output/json.js'),
    import('../../api/operations.js'),
  ]);
  const api = await adminApi(ctx, o.place);
  const deleted: string[] = [];
  const missing: string[] = [];
  for (const id of o.buildIds) {
    try {
      if (!api) throw new ApiError(404, { code: 'API_NOT_FOUND', message: `Build ${id} not found.` });
      await deleteEmulatorBuild(api, id);
      deleted.push(id);
      if (!ctx.global.json && !ctx.global.quiet) ctx.info(`Deleted build ${id}.`);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) throw err;
      missing.push(id);
      if (!ctx.global.json) ctx.warn(`no build ${id} in this emulator`);
    }
  }
  if (ctx.global.json) writeJson(ctx, { deleted, not_found: missing });
  else if (ctx.global.quiet) ctx.io.stdout.write(deleted.map((id) => id + '\n').join(''));
  return missing.length ? ExitCode.NOT_FOUND : undefined;
}
