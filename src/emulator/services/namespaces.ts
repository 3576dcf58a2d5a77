// A game's namespaces (SERVICE-FACTS "Versions, namespaces…" §2): every game starts with `prod` and `staging` on
// its first version; the cloud token creates more, deploys a version to one (its history kept), and sets its
// matchmaker bounds. The two a game starts with are rows only once something of them changed.
import { randomUUID } from 'node:crypto';
import { fail } from '../errors.js';
import type { NamespaceRow, NamespaceVersionRow, Store } from '../stores/store.js';
import type { Clock } from './clock.js';
import type { Game } from './games.js';
import { SEEDED_CREATE_TS, VERSION_ID, stagingNamespaceId } from './ids.js';
import { displayNameErrors, ident, type ValidationPath } from './version-validate.js';
import type { Versions } from './versions.js';

/** Production's namespace matchmaker defaults (mm-config's namespace table). */
export const LOBBY_COUNT_MAX = 128;
const PER_CLIENT = { max_players_per_client: 8, max_players_per_client_vpn: 4, max_players_per_client_proxy: 2, max_players_per_client_tor: 2, max_players_per_client_hosting: 2 };
const MAX_LOBBY_COUNT = 32767;
/** The version history's page when the request names none (production has no upper bound). */
const HISTORY_LIMIT = 32;
/**
 * The most deploys one answer holds. Production enforces no bound (its spec says 1 to 32); a shared emulator does,
 * as one `limit=999999999` over a long history was a 29 MB answer and 1.4 s of its replica.
 */
const HISTORY_MAX = 1_000;

export interface Namespace {
  namespaceId: string;
  gameId: string;
  nameId: string;
  displayName: string;
  versionId: string;
  createTs: number;
  lobbyCountMax: number;
  /** Every per-client bound, as `mm-config` set them; null: production's defaults. */
  maxPlayersPerClient: number | null;
}

export interface NamespacesDeps {
  store: Store;
  clock: Clock;
  versions: Versions;
  /** What a deploy does to the namespace's lobbies, once it is written (Lobbies.afterDeploy). */
  afterDeploy?: (game: Game, versionId: string) => Promise<void>;
}


const fromRow = (r: NamespaceRow): Namespace => ({
  namespaceId: r.namespace_id,
  gameId: r.game_id,
  nameId: r.name_id,
  displayName: r.display_name,
  versionId: r.version_id,
  createTs: r.create_ts,
  lobbyCountMax: r.lobby_count_max,
  maxPlayersPerClient: r.max_players_per_client,
});

const toRow = (n: Namespace): NamespaceRow => ({
  namespace_id: n.namespaceId,
  game_id: n.gameId,
  name_id: n.nameId,
  display_name: n.displayName,
  version_id: n.versionId,
  create_ts: n.createTs,
  lobby_count_max: n.lobbyCountMax,
  max_players_per_client: n.maxPlayersPerClient,
});

export class Namespaces {
  /** Which game a created namespace is of: namespaces are never deleted but with their game, so this only grows. */
  private readonly gameOf = new Map<string, string>();

  constructor(private readonly deps: NamespacesDeps) {}

  /** The two every game starts with, as a new game has them. */
  private starting(game: Game): Namespace[] {
    const createTs = game.seeded ? SEEDED_CREATE_TS : game.createTs;
    const base = { gameId: game.gameId, versionId: VERSION_ID, createTs, lobbyCountMax: LOBBY_COUNT_MAX, maxPlayersPerClient: null };
    return [
      { ...base, namespaceId: game.namespaceId, nameId: startingNameId(game, game.namespaceId), displayName: 'Production' },
      { ...base, namespaceId: stagingNamespaceId(game.gameId), nameId: startingNameId(game, stagingNamespaceId(game.gameId)), displayName: 'Staging' },
    ];
  }

  /** The game's namespaces, by display name as production sorts them. */
  async list(game: Game): Promise<Namespace[]> {
    const rows = (await this.deps.store.listNamespaces(game.gameId)).map(fromRow);
    const written = new Set(rows.map((n) => n.namespaceId));
    const all = [...this.starting(game).filter((n) => !written.has(n.namespaceId)), ...rows];
    return all.sort((a, b) => (a.displayName < b.displayName ? -1 : a.displayName > b.displayName ? 1 : a.createTs - b.createTs));
  }

  /** A namespace of the game by id; API_NOT_FOUND otherwise (production answers 500). */
  async get(game: Game, namespaceId: string): Promise<Namespace> {
    const start = this.starting(game).find((n) => n.namespaceId === namespaceId);
    const row = await this.deps.store.getNamespace(namespaceId);
    if (row !== undefined && row.game_id === game.gameId) return fromRow(row);
    if (start !== undefined) return start;
    return fail('API_NOT_FOUND', { what: `Namespace ${namespaceId}` });
  }

  /** Whether a namespace token's namespace is one of the game's: its own two cost no lookup. */
  async belongs(game: Game, namespaceId: string): Promise<boolean> {
    if (namespaceId === game.namespaceId || namespaceId === stagingNamespaceId(game.gameId)) return true;
    let gameId = this.gameOf.get(namespaceId);
    if (gameId === undefined) {
      const row = await this.deps.store.getNamespace(namespaceId);
      if (row === undefined) return false;
      this.gameOf.set(namespaceId, (gameId = row.game_id));
    }
    return gameId === game.gameId;
  }

  /** The errors production's namespace validation finds in a name id and display name (none: valid). */
  private async validate(game: Game, nameId: string, displayName: string): Promise<ValidationPath[]> {
    const existing = await this.list(game);
    const errors: ValidationPath[] = [];
    if (nameId.length === 0) errors.push(['name-id', 'too-short']);
    else if (nameId.length > 16) errors.push(['name-id', 'too-long']);
    else if (!ident(nameId)) errors.push(['name-id', 'invalid']);
    if (existing.some((n) => n.nameId === nameId)) errors.push(['name-id', 'not-unique']);
    errors.push(...displayNameErrors(displayName, []));
    return errors;
  }

  /** Creates a namespace on a version of the game: no history row, no idle lobbies (as production). */
  async create(game: Game, request: { nameId: string; displayName: string; versionId: string }): Promise<string> {
    const errors = await this.validate(game, request.nameId, request.displayName);
    if (errors.length > 0) fail('VALIDATION_ERROR', { paths: errors.map((p) => p.join('.')).join(', ') }, { errors: errors.map((path) => ({ path })) });
    await this.version(game, request.versionId);
    const ns: Namespace = {
      namespaceId: randomUUID(),
      gameId: game.gameId,
      nameId: request.nameId,
      displayName: request.displayName,
      versionId: request.versionId,
      createTs: this.deps.clock.now(),
      lobbyCountMax: LOBBY_COUNT_MAX,
      maxPlayersPerClient: null,
    };
    // Another request took the name since the validation looked.
    if (!(await this.deps.store.insertNamespace(toRow(ns))))
      fail('VALIDATION_ERROR', { paths: 'name-id.not-unique' }, { errors: [{ path: ['name-id', 'not-unique'] }] });
    return ns.namespaceId;
  }

  /** The version must be the game's (production answers 500 for another game's or a missing one). */
  private async version(game: Game, versionId: string): Promise<void> {
    if (!(await this.deps.versions.has(game, versionId))) fail('VERSION_NOT_FOUND', { version_id: versionId });
  }

  /** Deploys a version to a namespace; false when it already runs it (no history row then, as production). */
  async setVersion(game: Game, namespaceId: string, versionId: string): Promise<boolean> {
    const ns = await this.get(game, namespaceId);
    await this.version(game, versionId);
    if (ns.versionId === versionId) return false;
    const deployed = await this.deps.store.deployVersion(toRow({ ...ns, versionId }), this.deps.clock.now());
    // The game as seen from the namespace deployed to (its lobbies, its version).
    if (deployed) await this.deps.afterDeploy?.({ ...game, namespaceId }, versionId);
    return deployed;
  }

  /** The namespace's deploys, newest first. */
  async history(game: Game, namespaceId: string, limit = HISTORY_LIMIT): Promise<NamespaceVersionRow[]> {
    const ns = await this.get(game, namespaceId);
    return this.deps.store.namespaceHistory(ns.namespaceId, Math.min(limit, HISTORY_MAX));
  }

  /** The errors production finds in a matchmaker config (none: valid); negative numbers fail before, as there. */
  validateConfig(config: { lobbyCountMax: number; maxPlayers: number }): ValidationPath[] {
    for (const [field, v] of [['lobby_count_max', config.lobbyCountMax], ['max_players', config.maxPlayers]] as const)
      if (v < 0) fail('CLOUD_INVALID_CONFIG', { reason: `\`${field}\` out of bounds` });
    const errors: ValidationPath[] = [];
    if (config.lobbyCountMax < 1) errors.push(['lobby-count', 'too-low']);
    else if (config.lobbyCountMax > MAX_LOBBY_COUNT) errors.push(['lobby-count', 'too-high']);
    if (config.maxPlayers < 1) {
      errors.push(['max-players', 'too-low']);
      for (const kind of ['client', 'vpn', 'proxy', 'tor', 'hosting']) errors.push(['max-players', kind, 'too-low']);
    }
    return errors;
  }

  /** Sets the namespace's lobby bound and every per-client bound. */
  async setConfig(game: Game, namespaceId: string, config: { lobbyCountMax: number; maxPlayers: number }): Promise<void> {
    const errors = this.validateConfig(config);
    if (errors.length > 0) fail('VALIDATION_ERROR', { paths: errors.map((p) => p.join('.')).join(', ') }, { errors: errors.map((path) => ({ path })) });
    const ns = await this.get(game, namespaceId);
    await this.deps.store.putNamespace(toRow({ ...ns, lobbyCountMax: config.lobbyCountMax, maxPlayersPerClient: config.maxPlayers }));
  }
}

/** The name id of one of the two namespaces a game starts with: staging's id is derived, prod's is the game's. */
export function startingNameId(game: Pick<Game, 'gameId'>, namespaceId: string): 'prod' | 'staging' {
  return namespaceId === stagingNamespaceId(game.gameId) ? 'staging' : 'prod';
}

/** A namespace's matchmaker config as production answers it. */
export function matchmakerConfig(ns: Namespace): Record<string, number> {
  const perClient = ns.maxPlayersPerClient;
  const bounds = perClient === null ? PER_CLIENT : Object.fromEntries(Object.keys(PER_CLIENT).map((k) => [k, perClient]));
  return { lobby_count_max: ns.lobbyCountMax, ...bounds };
}
