// `gamehost profile show [name]`: one profile's values, tokens redacted, and which environment variables would
// win over them.
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import type { Profile } from '../../config/profiles.js';
import { defineCommand } from '../command.js';

export interface ShowOptions {
  name?: string;
}

export default defineCommand({
  operands: ['[name]'],
  summary: 'Show a profile, tokens redacted (default: the selected one)',
  examples: ['gamehost profile show', 'gamehost profile show staging', 'gamehost profile show --json | jq -r .endpoint   # in CI'],
  async parse(v): Promise<ShowOptions> {
    if (v.name === undefined) return {};
    const { validateProfileName } = await import('../../config/profiles.js');
    return { name: validateProfileName(v.name) };
  },
  run,
});

// The variables that win over each stored value (see src/config/target.ts).
const OVERRIDES: [what: string, vars: string[]][] = [
  ['endpoint (and so all of it)', ['GAMEHOST_ENDPOINT', 'RIVET_API_ENDPOINT']],
  ['cloud token', ['GAMEHOST_TOKEN', 'RIVET_TOKEN']],
  ['namespace token', ['GAMEHOST_NAMESPACE_TOKEN']],
  ['game', ['GAMEHOST_GAME']],
  ['namespace', ['GAMEHOST_NAMESPACE']],
];

async function run(ctx: Context, o: ShowOptions): Promise<void> {
  const [{ configFile, noSuchProfile, readProfiles, selectProfile }, { redactToken }, { writeJson }] = await Promise.all([
    import('../../config/profiles.js'),
    import('../../shared/redact.js'),
    import('../../output/json.js'),
  ]);
  const data = await readProfiles(ctx);
  let name: string;
  let profile: Profile;
  if (o.name !== undefined) {
    if (!data.profiles[o.name]) throw noSuchProfile(o.name, undefined, data);
    name = o.name;
    profile = data.profiles[o.name]!;
  } else {
    const selected = selectProfile(ctx, data);
    if (!selected) {
      throw new UsageError('no profile is selected', Object.keys(data.profiles).length ? 'name one, or pick one with `gamehost profile use <name>`' : 'save one with `gamehost login`');
    }
    ({ name, profile } = selected);
  }
  const view = {
    name,
    current: name === data.current,
    endpoint: profile.endpoint,
    game: profile.game ?? null,
    namespace: profile.namespace ?? null,
    token: profile.token ? redactToken(profile.token) : null,
    namespace_token: profile.namespace_token ? redactToken(profile.namespace_token) : null,
    config_file: configFile(ctx.env),
  };
  if (ctx.global.json) return writeJson(ctx, view);
  const { renderRecord } = await import('../../output/record.js');
  ctx.io.stdout.write(
    renderRecord(ctx, [
      { label: 'Profile', key: 'name', value: name + (view.current && ctx.io.stdout.isTTY ? ' (current)' : '') },
      ...(ctx.io.stdout.isTTY ? [] : [{ label: 'Current', key: 'current', value: String(view.current) }]),
      { label: 'Endpoint', key: 'endpoint', value: view.endpoint },
      { label: 'Cloud token', key: 'token', value: view.token ?? '-' },
      { label: 'Namespace token', key: 'namespace_token', value: view.namespace_token ?? (ctx.io.stdout.isTTY && view.token ? '- (made with the cloud token when needed)' : '-') },
      { label: 'Game', key: 'game', value: view.game ?? '-' },
      { label: 'Namespace', key: 'namespace', value: view.namespace ?? '-' },
      { label: 'Config file', key: 'config_file', value: view.config_file },
    ]),
  );
  for (const [what, vars] of OVERRIDES) {
    const set = vars.find((v) => ctx.env[v]);
    if (set) ctx.info(`note: ${set} is set, and wins over this profile's ${what}`);
  }
}
