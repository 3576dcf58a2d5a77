// Which version a lobby runs (SERVICE-FACTS "Versions, namespaces…" §2): find, create and list read the namespace's
// current version; a lobby keeps the one it was made with (its game mode's settings, env, ports and tier) to its stop.
import type { EmulatorConfig, PortSetting } from '../config.js';
import { namespaceStamp, type LobbyRow, type NamespaceRow, type Store } from '../stores/store.js';
import type { LobbyVersion } from './environment.js';
import type { Game } from './games.js';
import { VERSION_ID } from './ids.js';
import { regionContext } from './regions.js';
import { LOBBY_COUNT_MAX, startingNameId } from './namespaces.js';
import { DEFAULT_TIER } from './tiers.js';
import { readMatchmaker, type GameModeConfig, type JsonObject } from './version-config.js';
import { seededVersion } from './versions.js';

/** A version as its lobbies run it: its game modes, each with everything inherited. */
export interface RunningVersion {
  versionId: string;
  name: string;
  /** The 0.0.1 every game starts with, whose lobbies behave as the emulator's always did. */
  seeded: boolean;
  gameModes: GameModeConfig[];
}

/** The namespace's current version, with its matchmaker config (mm-config) read in the same row. */
export interface CurrentVersion {
  namespaceName: string;
  version: RunningVersion;
  /** Every running lobby of the namespace counts against it (production's default 128). */
  lobbyCountMax: number;
  /** Players from one address not yet removed, at most; null: never set (production's default, 8). */
  maxPlayersPerClient: number | null;
  /** The row it was read from, as Store.insertLobby checks it (store.ts namespaceStamp). */
  stamp: string;
}

/** Parsed versions kept at most (a version never changes, so only the count needs a bound). */
const CACHE_MAX = 256;
/** Namespace rows kept at most, for the reads that may use one a create then checks (current's `seen`). */
const ROWS_MAX = 4096;

export class LobbyVersions {
  private readonly parsed = new Map<string, RunningVersion>();
  private readonly rows = new Map<string, NamespaceRow | undefined>();

  constructor(private readonly deps: { store: Store; config: EmulatorConfig }) {}

  /**
   * The namespace's current version and its name id: one read of the namespace's row each time, so a deploy
   * through any replica counts at once; the version itself parsed once. With `seen`, the row this process read last
   * instead (read once): for a create, whose insert checks the row is still that one (Store.insertLobby's `seen`)
   * and, if not, makes its lobby again from a fresh read; it saves a create one round trip to the store.
   */
  async current(game: Game, opts: { seen?: boolean } = {}): Promise<CurrentVersion> {
    const ns = game.namespaceId;
    let row: NamespaceRow | undefined;
    if (opts.seen === true && this.rows.has(ns)) row = this.rows.get(ns);
    else {
      row = await this.deps.store.getNamespace(ns);
      if (this.rows.size >= ROWS_MAX) this.rows.clear();
      this.rows.set(ns, row);
    }
    // The two every game starts with are rows only once something of them changed.
    const namespaceName = row?.name_id ?? startingNameId(game, game.namespaceId);
    const limits = { lobbyCountMax: row?.lobby_count_max ?? LOBBY_COUNT_MAX, maxPlayersPerClient: row?.max_players_per_client ?? null };
    return { namespaceName, version: await this.version(game, row?.version_id ?? VERSION_ID), ...limits, stamp: namespaceStamp(row) };
  }

  /** A version of the game as its lobbies run it. */
  async version(game: Game, versionId: string): Promise<RunningVersion> {
    // The seeded version has the same id in every game, with each game's own game modes.
    const key = `${game.gameId}/${versionId}`;
    let version = this.parsed.get(key);
    if (version === undefined) {
      const seeded = versionId === VERSION_ID;
      const row = seeded ? seededVersion(game) : await this.deps.store.getVersion(versionId);
      const config = row === undefined ? {} : (JSON.parse(row.config) as JsonObject);
      const mm = readMatchmaker(config, regionContext(game));
      version = { versionId, name: row?.display_name ?? versionId, seeded, gameModes: mm?.gameModes ?? [] };
      if (this.parsed.size >= CACHE_MAX) this.parsed.clear();
      this.parsed.set(key, version);
    }
    return version;
  }

  /** What a lobby's process is told of its version, namespace, game mode and tier. */
  async ofLobby(game: Game, lobby: LobbyRow): Promise<LobbyVersion> {
    const [{ namespaceName }, version] = await Promise.all([this.current({ ...game, namespaceId: lobby.namespace_id }), this.version(game, lobby.version_id)]);
    return describe(version, namespaceName, lobby);
  }

  /**
   * The ports a new lobby of the game mode gets: the version's where its game mode names them, else those `emulator
   * serve` was given for the game mode (undefined: the default ones). A port is a free one of its protocol on this
   * host (TLS is not the emulator's: https is http, tcp_tls tcp); a range is given as is.
   */
  portSettings(gameMode: GameModeConfig): Record<string, PortSetting> | undefined {
    const ports = gameMode.docker?.ports ?? [];
    if (ports.length === 0) return this.deps.config.gameModeSettings[gameMode.nameId]?.ports;
    const protocol = { http: 'http', https: 'http', tcp: 'tcp', tcp_tls: 'tcp', udp: 'udp' } as const;
    return Object.fromEntries(ports.map((p) => [p.label, { protocol: protocol[p.protocol], ...(p.portRange === null ? {} : { range: p.portRange }) }]));
  }
}

/** A lobby's version as its process is told it: the version, its namespace's name id, its game mode's env and tier. */
export function describe(version: RunningVersion, namespaceName: string, lobby: Pick<LobbyRow, 'game_mode' | 'region_id'>): LobbyVersion {
  const gameMode = version.gameModes.find((m) => m.nameId === lobby.game_mode);
  const tier = gameMode?.regions.find((r) => r.nameId === lobby.region_id)?.tier ?? DEFAULT_TIER;
  return { versionId: version.versionId, versionName: version.name, namespaceName, env: gameMode?.docker?.env ?? {}, tier, buildId: gameMode?.docker?.imageId ?? null };
}
