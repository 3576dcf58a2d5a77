// `gamehost version`: the same as --version (and -V), and with --json the Node.js and platform too.
import type { Context } from '../context.js';
import { writeJson } from '../output/json.js';
import { version } from '../version.js';

export type VersionOptions = Record<string, never>;

export function parse(): VersionOptions {
  return {};
}

export async function run(ctx: Context, _o: VersionOptions): Promise<void> {
  if (ctx.global.json) return writeJson(ctx, { version, node: process.versions.node, platform: `${process.platform}-${process.arch}` });
  ctx.io.stdout.write(version + '\n');
}
