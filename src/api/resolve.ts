// What the configuration commands name by hand: a namespace by its name id (`staging`) or UUID, a version by its
// display name (`2026.12.02-1`) or UUID, each looked up in the game (GET /cloud/games/{game_id}); one clear line
// naming what the game has when it is not there.
import type { ApiClient } from './client.js';
import type { GetGameResponse, NamespaceSummary, VersionSummary } from './types.js';
import { UsageError } from '../errors.js';
import { sanitizeLine } from '../output/sanitize.js';

type Game = GetGameResponse['game'];

const valid = <T>(items: unknown, key: keyof T & string): T[] =>
  (Array.isArray(items) ? items : []).filter((x) => typeof x === 'object' && x !== null && typeof (x as Record<string, unknown>)[key] === 'string') as T[];

export function namespacesOf(game: Game): NamespaceSummary[] {
  return valid<NamespaceSummary>(game?.namespaces, 'namespace_id').filter((n) => typeof n.name_id === 'string');
}

export function versionsOf(game: Game): VersionSummary[] {
  return valid<VersionSummary>(game?.versions, 'version_id').filter((v) => typeof v.display_name === 'string');
}

const names = (items: string[]) => (items.length === 0 ? 'none' : items.map(sanitizeLine).join(', '));

/** The namespace `wanted` names (name id first, then id, both without case). */
export function findNamespace(game: Game, wanted: string): NamespaceSummary {
  const all = namespacesOf(game);
  const w = wanted.toLowerCase();
  const found = all.find((n) => n.name_id.toLowerCase() === w) ?? all.find((n) => n.namespace_id.toLowerCase() === w);
  if (!found) throw new UsageError(`the game has no namespace "${sanitizeLine(wanted)}"; it has ${names(all.map((n) => n.name_id))}`);
  return found;
}

/** The version `wanted` names (display name first, then id); the newest of a repeated name. */
export function findVersion(game: Game, wanted: string): VersionSummary {
  const all = versionsOf(game);
  const found = all.filter((v) => v.display_name === wanted).at(-1) ?? all.find((v) => v.version_id.toLowerCase() === wanted.toLowerCase());
  if (!found) {
    const recent = all.slice(-5).map((v) => v.display_name);
    throw new UsageError(`the game has no version "${sanitizeLine(wanted)}"; its newest are ${names(recent.reverse())}`, 'list them with `gamehost version list`');
  }
  return found;
}

/** The game, read once for the lookups of one command. */
export async function readGame(api: ApiClient): Promise<Game> {
  const { getGame } = await import('./operations.js');
  return (await getGame(api)).game;
}
