// Named profiles in the user's config directory, stored with conf. A profile is one service (its endpoint)
// and the tokens and ids used with it. The file holds tokens, so it is written 0600 in a 0700 directory and
// its mode is checked again on every read.
import fs from 'node:fs';
import path from 'node:path';
import type { BaseContext } from '../base-context.js';
import type { Env } from '../shared/io.js';
import { UsageError, describeFsError } from '../errors.js';
import { configDir } from './paths.js';
import { makeDirsSync } from '../shared/make-dirs.js';

export interface Profile {
  endpoint: string;
  token?: string;
  namespace_token?: string;
  game?: string;
  namespace?: string;
}

export interface ProfileData {
  /** The profile used when neither --profile nor GAMEHOST_PROFILE names one (`gamehost profile use`). */
  current?: string;
  profiles: Record<string, Profile>;
}

export interface SelectedProfile {
  name: string;
  profile: Profile;
  /** How it was picked: --profile, GAMEHOST_PROFILE, or the current profile of the config file. */
  via: 'flag' | 'env' | 'current';
}

export const DEFAULT_PROFILE = 'default';
const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const FIELDS = ['endpoint', 'token', 'namespace_token', 'game', 'namespace'] as const;
const checkModes = process.platform !== 'win32';

export function configFile(env: Env): string {
  return path.join(configDir(env), 'config.json');
}

/** `from` names where the name came from (`--profile`, GAMEHOST_PROFILE); none for a command's own operand. */
export function validateProfileName(name: string, from?: string): string {
  if (!NAME.test(name)) {
    throw new UsageError(`${from ? `${from}: ` : ''}a profile name is letters, digits, "-" and "_" (at most 64), not "${name}"`);
  }
  return name;
}

type ConfStore = { store: Record<string, unknown> };

async function openConf(ctx: BaseContext): Promise<ConfStore> {
  const file = configFile(ctx.env);
  const { default: Conf } = await import('conf');
  try {
    return new Conf<Record<string, unknown>>({
      cwd: configDir(ctx.env),
      configName: 'config',
      configFileMode: 0o600,
      // Profile names are keys: a dot in one must not become a path.
      accessPropertiesByDotNotation: false,
      projectName: 'gamehost',
    });
  } catch (err) {
    throw unreadable(file, err);
  }
}

function unreadable(file: string, err: unknown): UsageError {
  if (err instanceof SyntaxError) {
    return new UsageError(`${file} is not valid JSON (${err.message})`, 'fix it, or remove it and run `gamehost login` again');
  }
  return new UsageError(`cannot read ${file}: ${describeFsError(err)}`);
}

function notAFile(file: string): UsageError {
  return new UsageError(`${file} is not a regular file, and profiles (which hold tokens) are kept only in one`, 'move it away, then run `gamehost login` again');
}

/** Checks the shape of what conf read; a hand-edited file gets a clear error rather than a crash later. */
function normalise(file: string, raw: Record<string, unknown>): ProfileData {
  const bad = (what: string) => new UsageError(`${file}: ${what}`, 'fix it, or remove it and run `gamehost login` again');
  const profiles: Record<string, Profile> = {};
  const rawProfiles = raw.profiles ?? {};
  if (typeof rawProfiles !== 'object' || rawProfiles === null || Array.isArray(rawProfiles)) throw bad('"profiles" must be an object');
  for (const [name, value] of Object.entries(rawProfiles as Record<string, unknown>)) {
    if (typeof value !== 'object' || value === null) throw bad(`profile "${name}" must be an object`);
    const v = value as Record<string, unknown>;
    const profile: Partial<Profile> = {};
    for (const key of FIELDS) {
      if (v[key] === undefined) continue;
      if (typeof v[key] !== 'string') throw bad(`profile "${name}": "${key}" must be a string`);
      if (v[key] !== '') profile[key] = v[key] as string;
    }
    if (!profile.endpoint) throw bad(`profile "${name}" has no endpoint`);
    profiles[name] = profile as Profile;
  }
  const current = typeof raw.current === 'string' && raw.current ? raw.current : undefined;
  return { current, profiles };
}

const warned = new WeakSet<BaseContext>();

/** A group- or world-readable file with tokens in it gets one warning per command. */
function checkMode(ctx: BaseContext, file: string, mode: number, data: ProfileData): void {
  if (!checkModes || (mode & 0o077) === 0 || warned.has(ctx)) return;
  if (!Object.values(data.profiles).some((p) => p.token || p.namespace_token)) return;
  warned.add(ctx);
  ctx.warn(`${file} holds tokens and other users can read it (mode ${(mode & 0o777).toString(8).padStart(4, '0')}); run: chmod 600 ${file}`);
}

/** The stored object; a file that is not JSON is a usage error naming the file. */
function readStore(file: string, conf: ConfStore): Record<string, unknown> {
  try {
    return conf.store;
  } catch (err) {
    throw unreadable(file, err);
  }
}

/** The profiles on disk; none when the file does not exist (reading never creates it). */
export async function readProfiles(ctx: BaseContext): Promise<ProfileData> {
  const file = configFile(ctx.env);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw unreadable(file, err);
  }
  if (!stat.isFile()) throw notAFile(file);
  const data = normalise(file, readStore(file, await openConf(ctx)));
  checkMode(ctx, file, stat.mode, data);
  return data;
}

/** Reads, changes and writes the profiles; the file ends up 0600 and its directory 0700. */
export async function updateProfiles(ctx: BaseContext, change: (data: ProfileData) => ProfileData): Promise<ProfileData> {
  const dir = configDir(ctx.env);
  const file = configFile(ctx.env);
  try {
    makeDirsSync(dir);
    if (checkModes) fs.chmodSync(dir, 0o700);
  } catch (err) {
    throw new UsageError(`cannot create ${dir}: ${describeFsError(err)}`);
  }
  // conf writes a temporary file and renames it over the old one: a device or a FIFO would be replaced.
  if (fs.statSync(file, { throwIfNoEntry: false })?.isFile() === false) throw notAFile(file);
  const conf = await openConf(ctx);
  const next = change(normalise(file, readStore(file, conf)));
  const stored: Record<string, unknown> = { profiles: next.profiles };
  if (next.current) stored.current = next.current;
  try {
    conf.store = stored;
    // conf writes new files 0600; an older file with a wider mode is narrowed too.
    if (checkModes) fs.chmodSync(file, 0o600);
  } catch (err) {
    throw new UsageError(`cannot write ${file}: ${describeFsError(err)}`);
  }
  return next;
}

/** Which profile a command uses: --profile, then GAMEHOST_PROFILE, then the current one; none with --no-profile. */
export function selectProfile(ctx: BaseContext, data: ProfileData): SelectedProfile | undefined {
  const flag = ctx.global.profile;
  if (flag === false) return undefined;
  const pick = (name: string, via: SelectedProfile['via'], from: string): SelectedProfile => {
    validateProfileName(name, from);
    const profile = data.profiles[name];
    if (!profile) throw noSuchProfile(name, from, data);
    return { name, profile, via };
  };
  if (flag !== undefined) return pick(flag, 'flag', '--profile');
  if (ctx.env.GAMEHOST_PROFILE) return pick(ctx.env.GAMEHOST_PROFILE, 'env', 'GAMEHOST_PROFILE');
  if (data.current) {
    const profile = data.profiles[data.current];
    if (profile) return { name: data.current, profile, via: 'current' };
    ctx.warn(`the current profile "${data.current}" no longer exists; run \`gamehost profile use <name>\``);
  }
  return undefined;
}

export function noSuchProfile(name: string, from: string | undefined, data: ProfileData): UsageError {
  const names = Object.keys(data.profiles);
  return new UsageError(
    `${from ? `${from}: ` : ''}no profile "${name}"`,
    names.length ? `the profiles are: ${names.join(', ')}` : 'create one with `gamehost login --profile <name>`',
  );
}
