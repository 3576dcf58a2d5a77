// `gamehost namespace create <name-id>`: a namespace of the game on a version (the newest, unless --version).
import type { Context } from '../../context.js';
import { RefusedError, UsageError } from '../../errors.js';
import { NAME_ID } from '../../uuid.js';
import { defineCommand } from '../command.js';

export interface NamespaceCreateOptions {
  nameId: string;
  displayName: string;
  version?: string;
}


export default defineCommand({
  writes: true,
  operands: ['<name-id>', '[version]'],
  summary: 'Create a namespace on a version of the game',
  options: [
    { flags: '--display-name <name>', description: 'its name for people (default: the name id)' },
  ],
  notes: 'version: the version it runs, by name or id (default: the newest). Prints the new namespace; with -q, its id alone. A new namespace has no deploys in its history and no idle lobbies until one is deployed to it.',
  examples: ['gamehost namespace create qa', 'gamehost namespace create qa 2026.12.02-1 --display-name "QA"', 'NS=$(gamehost namespace create "pr-$PR" -q)   # in CI'],
  parse(v): NamespaceCreateOptions {
    if (!NAME_ID.test(v.nameId)) throw new UsageError(`"${v.nameId}" is not a namespace name id: 1 to 16 of a-z, 0-9 and "-", not starting or ending with "-" nor holding "--"`);
    if (v.displayName !== undefined && v.displayName.trim() === '') throw new UsageError('--display-name is empty');
    return { nameId: v.nameId, displayName: v.displayName ?? v.nameId, version: v.version };
  },
  run,
});

async function run(ctx: Context, o: NamespaceCreateOptions): Promise<void> {
  const [{ createNamespace }, { readGame, findVersion, namespacesOf, versionsOf }] = await Promise.all([import('../../api/operations.js'), import('../../api/resolve.js')]);
  const api = await ctx.api();
  const game = await readGame(api);
  // Said in words before the service says it as `name-id.not-unique` (which it still does for one made meanwhile).
  if (namespacesOf(game).some((n) => n.name_id === o.nameId))
    throw new RefusedError(`the game already has a namespace "${o.nameId}"`, 'list them with `gamehost namespace list`; deploy to it with `gamehost namespace set-version`');
  const version = o.version === undefined ? versionsOf(game).at(-1) : findVersion(game, o.version);
  if (version === undefined) throw new UsageError('the game has no version to put the namespace on', 'create one with `gamehost deploy --no-namespace`');
  const answer = await createNamespace(api, { name_id: o.nameId, display_name: o.displayName, version_id: version.version_id });
  const { writeJsonText } = await import('../../output/json.js');
  if (ctx.global.json) return writeJsonText(ctx, answer.text);
  if (ctx.global.quiet) return void ctx.io.stdout.write(`${answer.value.namespace_id}\n`);
  const { renderRecord } = await import('../../output/record.js');
  ctx.io.stdout.write(
    renderRecord(ctx, [
      { label: 'Namespace', key: 'name_id', value: o.nameId },
      { label: 'Namespace id', key: 'namespace_id', value: answer.value.namespace_id },
      { label: 'Version', key: 'version', value: version.display_name },
      { label: 'Version id', key: 'version_id', value: version.version_id },
    ]),
  );
}
