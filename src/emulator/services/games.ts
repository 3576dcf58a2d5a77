// Games: the seeded one, and one per CI job (create, list, delete, expiry). A deleted or expired game takes its
// lobbies, players, builds, uploads and exports with it, records and bytes, and its tokens answer 401 from then on.
// Twice: at once, and again PURGE_STALE_MS later, when its row goes too. In between the row stays, its deletion
// begun (so its tokens are refused), for what a request that passed its token check just before the deletion may
// still have written (a lobby, a build, an export): such a request is long over by the second purge.
import { randomUUID } from 'node:crypto';
import type { EmulatorConfig } from '../config.js';
import { fail } from '../errors.js';
import type { InternalErrors } from '../operator-log.js';
import type { BlobStore, GameRow, PurgedGame, Store } from '../stores/store.js';
import type { Clock } from './clock.js';
import { GAME_ID, NAMESPACE_ID, stagingNamespaceId } from './ids.js';
import { signToken } from './tokens.js';

export const DEFAULT_GAME_TTL_MS = 24 * 60 * 60 * 1000;
export const MAX_GAME_TTL_MS = 30 * 24 * 60 * 60 * 1000;
const MAX_NAME_BYTES = 128;
// A deletion begun this long ago is purged again and its row removed (also when the process that began it died).
const PURGE_STALE_MS = 5 * 60 * 1000;

/** A game as the other services see it: whose namespace, which game modes and regions it has, and its life. */
export interface Game {
  gameId: string;
  namespaceId: string;
  gameModes: string[];
  regions: { id: string; name: string }[];
  name: string;
  /** 0 for the seeded game, which has always been there. */
  createTs: number;
  /** null for the seeded game, which never expires. */
  expireTs: number | null;
  seeded: boolean;
}

export interface GameTokens {
  cloud: string;
  public: string;
  dev: string;
}

export interface GameRequest {
  name: string;
  /** Default: the configured ones. */
  gameModes?: string[];
  /** Region ids; default: the configured regions. */
  regions?: string[];
  /** Default DEFAULT_GAME_TTL_MS. */
  ttlMs?: number;
}

/** The tokens of a game; they depend on nothing but the secret and the ids, so every replica signs the same. */
export function gameTokens(secret: Buffer, gameId: string, namespaceId: string): GameTokens {
  return {
    cloud: signToken(secret, { kind: 'cloud', game_id: gameId }),
    public: signToken(secret, { kind: 'pub', game_id: gameId, namespace_id: namespaceId }),
    dev: signToken(secret, { kind: 'dev', game_id: gameId, namespace_id: namespaceId }),
  };
}

function fromRow(row: GameRow): Game {
  return {
    gameId: row.game_id,
    namespaceId: row.namespace_id,
    gameModes: JSON.parse(row.game_modes) as string[],
    regions: JSON.parse(row.regions) as { id: string; name: string }[],
    name: row.name,
    createTs: row.create_ts,
    expireTs: row.expire_ts,
    seeded: false,
  };
}

export interface GameDeps {
  store: Store;
  blobs: BlobStore;
  clock: Clock;
  config: EmulatorConfig;
  secret: Buffer;
  /** Where a sweep nobody waits on that failed is told (the next one tries again). */
  internal: InternalErrors;
}

export class Games {
  /** The one game every store has, with the process's configured game modes and regions. */
  readonly seeded: Game;
  private sweeping: Promise<void> | null = null;
  /** A sweep nobody waits on failed (a file it could not delete): told, and the next one tries again. */
  private readonly sweepFailed = (err: unknown): void => this.deps.internal.tell('removing expired games', err);
  /** Parsed rows, while the store hands back the same row object (a store that caches rows). */
  private readonly parsed = new WeakMap<GameRow, Game>();

  constructor(private readonly deps: GameDeps) {
    const { config } = deps;
    this.seeded = {
      gameId: GAME_ID,
      namespaceId: NAMESPACE_ID,
      gameModes: config.gameModes,
      regions: config.regions,
      name: '',
      createTs: 0,
      expireTs: null,
      seeded: true,
    };
  }

  async create(request: GameRequest): Promise<{ game: Game; tokens: GameTokens }> {
    const { config, store, secret } = this.deps;
    const now = this.deps.clock.now();
    const ttl = request.ttlMs ?? DEFAULT_GAME_TTL_MS;
    if (!Number.isSafeInteger(ttl) || ttl < 1000 || ttl > MAX_GAME_TTL_MS)
      fail('API_BAD_BODY', { reason: 'ttl_seconds must be from 1 second to 30 days (2592000).' });
    if (Buffer.byteLength(request.name) > MAX_NAME_BYTES) fail('API_BAD_BODY', { reason: `name must be at most ${MAX_NAME_BYTES} bytes.` });
    const gameModes = request.gameModes ?? config.gameModes;
    const regionIds = request.regions ?? config.regions.map((r) => r.id);
    for (const [field, list] of [['game_modes', gameModes], ['regions', regionIds]] as const) {
      if (list.length === 0 || list.some((v) => !/^[a-z0-9][a-z0-9_-]{0,63}$/.test(v)))
        fail('API_BAD_BODY', { reason: `${field} must list 1 or more names of lowercase letters, digits, "_" and "-".` });
      if (new Set(list).size !== list.length) fail('API_BAD_BODY', { reason: `${field} lists a name twice.` });
    }
    // A region the config names keeps its display name; any other is shown by its id.
    const regions = regionIds.map((id) => ({ id, name: config.regions.find((r) => r.id === id)?.name ?? id }));
    const row: GameRow = {
      game_id: randomUUID(),
      namespace_id: randomUUID(),
      name: request.name,
      game_modes: JSON.stringify(gameModes),
      regions: JSON.stringify(regions),
      create_ts: now,
      expire_ts: now + ttl,
      delete_ts: null,
    };
    await store.insertGame(row);
    // Creating is a moment when nobody waits on a sweep's few milliseconds; a sweep that fails is tried again later.
    await this.sweep().catch(this.sweepFailed);
    return { game: fromRow(row), tokens: gameTokens(secret, row.game_id, row.namespace_id) };
  }

  /** The seeded game first, then the live created games, oldest first. */
  async list(): Promise<Game[]> {
    await this.sweep().catch(this.sweepFailed);
    const now = this.deps.clock.now();
    const rows = await this.deps.store.listGames();
    return [this.seeded, ...rows.filter((r) => r.expire_ts > now).map(fromRow)];
  }

  /**
   * The game, when it exists and is neither deleted nor expired; undefined otherwise. Called for every request
   * with a token; the seeded game costs no lookup. An expired game found here starts a sweep in the background.
   */
  async live(gameId: string): Promise<Game | undefined> {
    if (gameId === GAME_ID) return this.seeded;
    const row = await this.deps.store.getGame(gameId);
    if (row === undefined || row.delete_ts !== null) return undefined;
    if (row.expire_ts <= this.deps.clock.now()) {
      this.sweep().catch(this.sweepFailed);
      return undefined;
    }
    let game = this.parsed.get(row);
    if (game === undefined) this.parsed.set(row, (game = fromRow(row)));
    return game;
  }

  /** The live game whose namespace holds the lobby, or undefined. */
  async ofLobby(lobbyId: string): Promise<Game | undefined> {
    const lobby = await this.deps.store.getLobby(lobbyId);
    if (lobby === undefined) return undefined;
    const ns = lobby.namespace_id;
    const inGame = (g: Game) => g.namespaceId === ns || stagingNamespaceId(g.gameId) === ns;
    // A created namespace's row names its game.
    const gameId = inGame(this.seeded) ? GAME_ID : (await this.deps.store.getNamespace(ns))?.game_id;
    const game = gameId === undefined ? (await this.list()).find(inGame) : await this.live(gameId);
    // The game as the lobby's namespace sees it.
    return game && (game.namespaceId === ns ? game : { ...game, namespaceId: ns });
  }

  /** Deletes a game now; API_NOT_FOUND when it is unknown, expired or already being deleted. */
  async delete(gameId: string): Promise<PurgedGame> {
    if (gameId === GAME_ID) fail('API_FORBIDDEN', { reason: 'the seeded game stays; `gamehost emulator reset` deletes everything.' });
    const { store, clock } = this.deps;
    const row = await store.getGame(gameId);
    if (row === undefined || row.expire_ts <= clock.now() || !(await store.claimGameDeletion(gameId, clock.now())))
      fail('API_NOT_FOUND', { what: `Game ${gameId}` });
    return this.purge(row, { keepGame: true });
  }

  /**
   * Removes the expired games (and finishes purges a dead process left), each by whichever process claims it
   * first; one sweep at a time in a process.
   */
  sweep(): Promise<void> {
    this.sweeping ??= (async () => {
      const { store, clock } = this.deps;
      try {
        const { expired, stale } = await store.claimExpiredGames(clock.now(), PURGE_STALE_MS);
        for (const [ids, keepGame] of [[expired, true], [stale, false]] as const) {
          for (const gameId of ids) {
            const row = await store.getGame(gameId);
            if (row !== undefined) await this.purge(row, { keepGame });
          }
        }
      } finally {
        this.sweeping = null;
      }
    })();
    return this.sweeping;
  }

  /**
   * The bytes first, then the records: a purge cut short is found again (and finished) by a later sweep. The first
   * purge keeps the game's row; the one a sweep does PURGE_STALE_MS later removes it.
   */
  private async purge(row: GameRow, { keepGame }: { keepGame: boolean }): Promise<PurgedGame> {
    const { store, blobs } = this.deps;
    const exports = await blobs.deleteGameObjects(await store.gameObjects(row.game_id));
    const created = (await store.listNamespaces(row.game_id)).map((n) => n.namespace_id);
    const purged = await store.purgeGame(row.game_id, [row.namespace_id, stagingNamespaceId(row.game_id), ...created], keepGame);
    // A bucket keeps its exports as objects (counted as they are deleted), the local store as records.
    return { ...purged, exports: purged.exports + exports };
  }
}
