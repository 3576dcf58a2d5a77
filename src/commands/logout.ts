// `gamehost logout`: removes a profile, and with it the tokens it held.
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { defineCommand } from './command.js';

export interface LogoutOptions {
  /** Named by --profile or GAMEHOST_PROFILE; otherwise the current profile, found when the command runs. */
  name?: string;
  from: string;
}

export default defineCommand({
  summary: 'Remove a profile and its tokens',
  notes: 'Removes the profile named by --profile or GAMEHOST_PROFILE, else the current one.',
  examples: ['gamehost logout', 'gamehost logout --profile staging', 'gamehost logout --profile ci --no-input || true   # in CI, when the job ends'],
  async parse(_v, ctx): Promise<LogoutOptions> {
    const { validateProfileName } = await import('../config/profiles.js');
    const flag = ctx.global.profile;
    if (flag === false) throw new UsageError('--no-profile cannot go with logout', 'name the profile with --profile <name>');
    if (flag !== undefined) return { name: validateProfileName(flag, '--profile'), from: '--profile' };
    if (ctx.env.GAMEHOST_PROFILE) return { name: validateProfileName(ctx.env.GAMEHOST_PROFILE, 'GAMEHOST_PROFILE'), from: 'GAMEHOST_PROFILE' };
    return { from: 'the current profile' };
  },
  run,
});

async function run(ctx: Context, o: LogoutOptions): Promise<void> {
  const [{ configFile, noSuchProfile, readProfiles, updateProfiles }, { writeJson }] = await Promise.all([
    import('../config/profiles.js'),
    import('../output/json.js'),
  ]);
  const before = await readProfiles(ctx);
  const name = o.name ?? before.current;
  if (!name) throw new UsageError('no profile to log out of: none is current', 'name one with --profile <name>; see `gamehost profile list`');
  if (!before.profiles[name]) throw noSuchProfile(name, o.from, before);
  const after = await updateProfiles(ctx, (data) => {
    const { [name]: _removed, ...profiles } = data.profiles;
    return { current: data.current === name ? undefined : data.current, profiles };
  });
  if (ctx.global.json) return writeJson(ctx, { profile: name, removed: true, current: after.current ?? null });
  ctx.info(`Removed profile "${name}" and its tokens from ${configFile(ctx.env)}.`);
  const left = Object.keys(after.profiles);
  if (before.current === name && left.length) {
    ctx.info(`No profile is current now: pick one with \`gamehost profile use <name>\` (${left.join(', ')}).`);
  }
}
