// Which emulator an `emulator ...` admin command acts on: a data directory directly (the default, so it works with
// no server running), or a running emulator's admin routes when an endpoint is given.
import path from 'node:path';
import type { Context } from '../../context.js';
import { emulatorDir } from '../../config/paths.js';
import { UsageError } from '../../errors.js';

export type EmulatorPlace = { kind: 'data-dir'; dir: string } | { kind: 'endpoint' };

/** `--data-dir` wins; else `--endpoint` or GAMEHOST_ENDPOINT means a running emulator; else the default data dir. */
export function emulatorPlace(opts: Record<string, unknown>, ctx: Context): EmulatorPlace {
  if (opts.dataDir !== undefined) {
    if (ctx.global.endpoint !== undefined) {
      throw new UsageError('--data-dir and --endpoint do not go together', 'use --data-dir for a data directory, --endpoint for a running emulator');
    }
    const dir = String(opts.dataDir);
    if (!dir) throw new UsageError('--data-dir is empty');
    return { kind: 'data-dir', dir: path.resolve(ctx.cwd, dir) };
  }
  if (ctx.global.endpoint !== undefined || ctx.env.GAMEHOST_ENDPOINT) return { kind: 'endpoint' };
  return { kind: 'data-dir', dir: emulatorDir(ctx.env) };
}
