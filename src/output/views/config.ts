// The game's configuration as tables: its namespaces (and the version each runs), its versions (and where each is
// deployed), a namespace's deploys. The service's answers are input: a field of the wrong type is shown as "-",
// every text is sanitised by the table, and nothing here assumes an order the service did not promise.
import type { GetGameResponse, NamespaceHistoryResponse } from '../../api/types.js';
import { formatTime } from '../format.js';
import { formatTable } from '../table.js';
import { fit, paint, timeStyle, type ViewOptions } from './options.js';

const text = (v: unknown): string => (typeof v === 'string' ? v : '-');
const list = <T>(v: unknown): T[] => (Array.isArray(v) ? (v.filter((x) => typeof x === 'object' && x !== null) as T[]) : []);
const time = (v: unknown, o: ViewOptions) => (typeof v === 'string' ? formatTime(v, timeStyle(o)) : '-');

type Game = GetGameResponse['game'];

/** A version's display name by id, from the game's list (the id itself when the list does not name it). */
export function versionNames(game: Game): (id: unknown) => string {
  const names = new Map(list<{ version_id?: unknown; display_name?: unknown }>(game?.versions).map((v) => [v.version_id, v.display_name]));
  return (id) => {
    const name = names.get(id);
    return typeof name === 'string' ? name : text(id);
  };
}

/** `namespace list`: a row per namespace, as the service sorts them (by display name). */
export function formatNamespaces(game: Game, o: ViewOptions): string {
  // A namespace without an id is nothing a command can name: left out.
  const namespaces = list<Record<string, unknown>>(game?.namespaces).filter((n) => typeof n.namespace_id === 'string');
  if (o.tty && namespaces.length === 0) return fit(paint(o).dim('The game has no namespaces.'), o) + '\n';
  const name = versionNames(game);
  const rows = namespaces.map((n) => [text(n.name_id), text(n.display_name), name(n.version_id), text(n.namespace_id), text(n.version_id), time(n.create_ts, o)]);
  return formatTable({ head: ['NAMESPACE', 'NAME', 'VERSION', 'NAMESPACE ID', 'VERSION ID', 'CREATED'], rows, keep: [0, 3], shrink: [1, 2], drop: [5, 4, 1] }, o);
}

/** `version list`: a row per version, newest first, with the namespaces that run it. */
export function formatVersions(game: Game, o: ViewOptions): string {
  const versions = list<Record<string, unknown>>(game?.versions).filter((v) => typeof v.version_id === 'string');
  if (o.tty && versions.length === 0) return fit(paint(o).dim('The game has no versions.'), o) + '\n';
  const namespaces = list<Record<string, unknown>>(game?.namespaces);
  const runs = (id: unknown) => namespaces.filter((n) => n.version_id === id).map((n) => text(n.name_id)).join(',') || '-';
  const newestFirst = [...versions].reverse();
  const rows = newestFirst.map((v) => [text(v.display_name), text(v.version_id), runs(v.version_id), time(v.create_ts, o)]);
  return formatTable({ head: ['VERSION', 'VERSION ID', 'DEPLOYED TO', 'CREATED'], rows, keep: [0, 1], drop: [3, 2] }, o);
}

/** `namespace history`: its deploys, newest first, each version by name. */
export function formatHistory(history: NamespaceHistoryResponse, game: Game, o: ViewOptions): string {
  const deploys = list<Record<string, unknown>>(history?.versions);
  if (o.tty && deploys.length === 0) return fit(paint(o).dim('Nothing was deployed to this namespace yet.'), o) + '\n';
  const name = versionNames(game);
  const rows = deploys.map((d) => [time(d.deploy_ts, o), name(d.version_id), text(d.version_id)]);
  return formatTable({ head: ['DEPLOYED', 'VERSION', 'VERSION ID'], rows, keep: [1, 2], drop: [0] }, o);
}
