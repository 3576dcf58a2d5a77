// Which emulator an `emulator ...` admin command acts on: a data directory (the default, so it works with no server
// running: the command starts one in-process on it), or a running emulator when an endpoint is given. Either way
// the command talks to the emulator's admin API.
import fs from 'node:fs';
import path from 'node:path';
import type { ApiClient } from '../../api/client.js';
import type { Context } from '../../context.js';
import { emulatorDir } from '../../config/paths.js';
import { UsageError } from '../../errors.js';

/** `given`: the directory was named (--data-dir), so one without emulator data is a mistyped path. */
export type EmulatorPlace = { kind: 'data-dir'; dir: string; given?: boolean } | { kind: 'endpoint' };

export const DATA_DIR_OPTION = {
  flags: '--data-dir <dir>',
  description: "the emulator's data directory (default: the embedded emulator's; with --endpoint: that server's)",
} as const;

/** `--data-dir` wins; else `--endpoint` or GAMEHOST_ENDPOINT means a running emulator; else the default data dir. */
export function emulatorPlace(dataDir: string | undefined, ctx: Context): EmulatorPlace {
  if (dataDir !== undefined) {
    if (ctx.global.endpoint !== undefined) {
      throw new UsageError('--data-dir and --endpoint do not go together', 'use --data-dir for a data directory, --endpoint for a running emulator');
    }
    return { kind: 'data-dir', dir: dataDirPath(dataDir, ctx.cwd), given: true };
  }
  if (ctx.global.endpoint !== undefined || ctx.env.GAMEHOST_ENDPOINT) return { kind: 'endpoint' };
  return { kind: 'data-dir', dir: emulatorDir(ctx.env) };
}

/**
 * A client for the emulator's admin API at `place`; undefined for a data directory that holds no emulator yet
 * (nothing is created by asking), which is said: a notice for the default directory (its emulator is made on
 * first use), an error for one named with --data-dir (a mistyped path must not look like an empty emulator).
 */
export async function adminApi(ctx: Context, place: EmulatorPlace): Promise<ApiClient | undefined> {
  if (place.kind === 'endpoint') return ctx.api();
  const { holdsStore } = await import('../../emulator/index.js');
  if (holdsStore(place.dir)) return ctx.emulatorApi(place.dir);
  if (place.given) {
    throw new UsageError(`--data-dir: no emulator data in ${place.dir}`, `check the path; the embedded emulator keeps its data in ${emulatorDir(ctx.env)}`);
  }
  if (!ctx.global.json) ctx.info(`No emulator data in ${place.dir} yet: the embedded emulator makes it on first use.`);
  return undefined;
}

/**
 * The game an admin command lists for: at a running emulator the target's (--game, GAMEHOST_GAME, the profile);
 * on a data directory --game or GAMEHOST_GAME (`eval "$(gamehost emulator game create --env)"` sets it), else the
 * seeded game.
 */
export async function adminGameId(ctx: Context, place: EmulatorPlace, api: ApiClient): Promise<string | undefined> {
  if (place.kind === 'endpoint') return api.target.gameId;
  const { parseUuid } = await import('../args.js');
  if (ctx.global.game !== undefined) return parseUuid('--game', ctx.global.game);
  return ctx.env.GAMEHOST_GAME ? parseUuid('GAMEHOST_GAME', ctx.env.GAMEHOST_GAME) : undefined;
}

/** A value quoted for a POSIX shell: single quotes, each ' written as '\''. */
function shellQuote(value: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The variables every command reads, for a game at an endpoint (none for an in-process emulator). */
export interface GameVariables {
  endpoint?: string;
  game_id: string;
  namespace_id: string;
  tokens: { cloud: string; public: string };
}

export function gameVariables(v: GameVariables): [name: string, value: string][] {
  return [
    ...(v.endpoint === undefined ? [] : [['GAMEHOST_ENDPOINT', v.endpoint] as [string, string]]),
    ['GAMEHOST_TOKEN', v.tokens.cloud],
    ['GAMEHOST_NAMESPACE_TOKEN', v.tokens.public],
    ['GAMEHOST_GAME', v.game_id],
    ['GAMEHOST_NAMESPACE', v.namespace_id],
  ];
}

/** `export NAME=value` lines for `eval` or `source`. */
export function exportLines(vars: [name: string, value: string][]): string {
  return vars.map(([k, v]) => `export ${k}=${shellQuote(v)}\n`).join('');
}

/** A path option that must not be empty, resolved against the working directory. */
export function resolvePath(flag: string, raw: string, cwd: string): string {
  if (!raw) throw new UsageError(`${flag} is empty`);
  return path.resolve(cwd, raw);
}

/**
 * `--data-dir`'s directory, absolute; a path that is there but is no directory (a file, or under one) is a usage
 * error. What else keeps it from being used (permissions) is the emulator's to say when it starts.
 */
export function dataDirPath(raw: string, cwd: string): string {
  const dir = resolvePath('--data-dir', raw, cwd);
  let isFile: boolean;
  try {
    const stat = fs.statSync(dir, { throwIfNoEntry: false });
    isFile = stat !== undefined && !stat.isDirectory();
  } catch (err) {
    isFile = (err as NodeJS.ErrnoException).code === 'ENOTDIR';
  }
  if (isFile) throw new UsageError(`--data-dir: ${dir} is not a directory`);
  return dir;
}
