// `gamehost version` alone (or `version cli`): the same as --version (and -V), and with --json the Node.js and platform too.
import type { Context } from '../../context.js';
import { version } from '../../version.js';
import { defineCommand } from '../command.js';

export default defineCommand({
  summary: 'Print the version (as --version and -V do)',
  examples: ['gamehost version', 'gamehost version --json   # in CI: with the Node.js version and platform'],
  parse: () => ({}),
  run,
});

async function run(ctx: Context): Promise<void> {
  const { writeJson } = await import('../../output/json.js');
  if (ctx.global.json) return writeJson(ctx, { version, node: process.versions.node, platform: `${process.platform}-${process.arch}` });
  ctx.io.stdout.write(version + '\n');
}
