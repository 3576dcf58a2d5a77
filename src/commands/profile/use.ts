// `gamehost profile use <name>`: makes a saved profile the current one.
import type { Context } from '../../context.js';
import { defineCommand } from '../command.js';

export interface UseOptions {
  name: string;
}

export default defineCommand({
  operands: ['<name>'],
  summary: 'Make a profile the current one',
  examples: ['gamehost profile use staging', 'GAMEHOST_PROFILE=staging gamehost stats   # in CI: one command, without changing the current profile'],
  async parse(v): Promise<UseOptions> {
    const { validateProfileName } = await import('../../config/profiles.js');
    return { name: validateProfileName(v.name) };
  },
  run,
});

async function run(ctx: Context, o: UseOptions): Promise<void> {
  const [{ noSuchProfile, updateProfiles }, { writeJson }] = await Promise.all([import('../../config/profiles.js'), import('../../output/json.js')]);
  const data = await updateProfiles(ctx, (data) => {
    if (!data.profiles[o.name]) throw noSuchProfile(o.name, undefined, data);
    return { ...data, current: o.name };
  });
  if (ctx.global.json) return writeJson(ctx, { current: o.name, endpoint: data.profiles[o.name]!.endpoint });
  ctx.info(`Now using profile "${o.name}" (${data.profiles[o.name]!.endpoint}).`);
  if (ctx.env.GAMEHOST_PROFILE && ctx.env.GAMEHOST_PROFILE !== o.name) {
    ctx.warn(`GAMEHOST_PROFILE=${ctx.env.GAMEHOST_PROFILE} is set in this shell and wins over the current profile`);
  }
}
