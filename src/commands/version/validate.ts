// `gamehost version validate [namespace]`: the project's rivet.yaml checked by the service as `gamehost deploy`
// would check it (rivet.<namespace>.* over it, -o), nothing built, pushed or created.
import type { Context } from '../../context.js';
import { defineCommand } from '../command.js';
import { PROJECT_OPTIONS } from '../deploy.js';

interface ValidateOptions {
  namespace?: string;
  configFile?: string;
  overrides: string[];
  name?: string;
}

export default defineCommand({
  operands: ['[namespace]'],
  summary: "Check the project's rivet.yaml with the service, as deploy would: every error as its path",
  options: [
    ...PROJECT_OPTIONS,
    { flags: '--name <display name>', description: "check this version name too (taken or not; default: a name that is never taken)" },
  ],
  notes: "namespace: whose rivet.<namespace>.* is laid over the config. Valid: one line on stdout, exit 0 (--json: {\"errors\": []}). Invalid: each error as its path and reason, exit 2.",
  examples: ['gamehost version validate', 'gamehost version validate prod -o matchmaker.max_players=16', 'gamehost version validate -c deploy/rivet.toml --json   # in CI, before the deploy'],
  parse: (v): ValidateOptions => ({ namespace: v.namespace, configFile: v.config, overrides: v.override ?? [], name: v.name }),
  run,
});

async function run(ctx: Context, o: ValidateOptions): Promise<void> {
  const [{ readProject, validateProject }, { readGame, findNamespace }] = await Promise.all([import('../deploy.js'), import('../../api/resolve.js')]);
  const project = await readProject(ctx, o);
  const api = await ctx.api();
  // As deploy refuses a namespace the game does not have: a mistyped one is not "valid".
  if (o.namespace !== undefined) findNamespace(await readGame(api), o.namespace);
  await validateProject(ctx, api, { ...project, name: o.name, what: 'gamehost deploy would refuse it' });
  if (ctx.global.json) {
    const { writeJson } = await import('../../output/json.js');
    return writeJson(ctx, { errors: [] });
  }
  if (!ctx.global.quiet) ctx.io.stdout.write(`The config is valid (${project.files.join(' + ')}).\n`);
}
