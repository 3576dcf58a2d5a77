// Lists of the matchmaker: `lobby list` (a row per lobby) and `region list` (a row per region). In a terminal
// aligned tables that fit the width; piped, tab-separated rows. Every value is the service's, so every value is
// sanitised and every number may be anything the spec allows.
import type { BaseContext } from '../../base-context.js';
import type { ListLobbiesResponse, ListRegionsResponse } from '../../api/types.js';
import { formatCount } from '../format.js';
import { formatTable } from '../table.js';
import { fitBlock, viewOptions, type ViewOptions } from './options.js';

const STATE_CHARS = 60;

/** A lobby's state in one short line: its JSON, cut with an ellipsis; `-` when it has none. */
export function stateSummary(state: unknown): string {
  if (state === undefined || state === null) return '-';
  let text: string;
  try {
    text = JSON.stringify(state) ?? '-';
  } catch {
    text = '-';
  }
  return text.length > STATE_CHARS ? `${text.slice(0, STATE_CHARS - 1)}…` : text;
}

export function formatLobbyList(res: ListLobbiesResponse, o: ViewOptions, withState: boolean): string {
  // As the service lists them: a lobby shows once a player is connected to it (or while it is its game mode's only one).
  if (o.tty && res.lobbies.length === 0) return fitBlock('No lobby is listed.\nA lobby is listed once a player is connected to it.\n', o);
  const head = ['LOBBY', 'GAME MODE', 'REGION', 'PLAYERS', ...(withState ? ['STATE'] : [])];
  const rows = res.lobbies.map((l) => [
    l.lobby_id,
    l.game_mode_id,
    l.region_id,
    `${formatCount(l.total_player_count)}/${formatCount(l.max_players_normal)}`,
    ...(withState ? [stateSummary(l.state)] : []),
  ]);
  return formatTable({ head, rows, keep: [0], drop: withState ? [4] : [] }, o);
}

export function renderLobbyList(ctx: BaseContext, res: ListLobbiesResponse, withState: boolean): string {
  return formatLobbyList(res, viewOptions(ctx, ctx.io.stdout, false), withState);
}

export function formatRegions(res: ListRegionsResponse, o: ViewOptions): string {
  const rows = res.regions.map((r) => [r.region_id, r.region_display_name, r.provider_display_name]);
  return formatTable({ head: ['REGION', 'NAME', 'PROVIDER'], rows, keep: [0] }, o);
}

export function renderRegions(ctx: BaseContext, res: ListRegionsResponse): string {
  return formatRegions(res, viewOptions(ctx, ctx.io.stdout, false));
}
