// A game's versions (SERVICE-FACTS "Versions, namespaces…" §1): validated as production validates them, created with
// builds of the game that completed, read back with their config normalised, and their names reserved by day.
import { randomUUID } from 'node:crypto';
import { fail } from '../errors.js';
import { regionContext } from './regions.js';
import type { Store, VersionRow } from '../stores/store.js';
import type { Clock } from './clock.js';
import type { Game } from './games.js';
import { SEEDED_CREATE_TS, VERSION_ID, VERSION_NAME } from './ids.js';
import { readMatchmaker, type GameModeConfig, type JsonObject, type MatchmakerConfig } from './version-config.js';
import { validateVersion, type ValidationPath } from './version-validate.js';

export interface VersionsDeps {
  store: Store;
  clock: Clock;
  config?: { verificationLoopback: boolean };
}

/** A version as the game lists it. */
export type VersionSummary = Pick<VersionRow, 'version_id' | 'display_name' | 'create_ts'>;

export class Versions {
  constructor(private readonly deps: VersionsDeps) {}

  /** The game's versions: the 0.0.1 it started with, then those created, oldest first. */
  async list(game: Game): Promise<VersionSummary[]> {
    const rows = [seededVersion(game), ...(await this.deps.store.listVersions(game.gameId))];
    return rows.map(({ version_id, display_name, create_ts }) => ({ version_id, display_name, create_ts }));
  }

  /** What production's validation finds in a version (none: valid); the builds it names are not looked at. */
  async validate(game: Game, displayName: string, config: JsonObject): Promise<ValidationPath[]> {
    // The name looked up alone (the game's versions are not read): taken by the version it started with, or one made.
    const taken = displayName === VERSION_NAME || (await this.deps.store.versionNamed(game.gameId, displayName));
    return validateVersion(displayName, config, { ...regionContext(game), displayNames: taken ? [displayName] : [], loopbackVerification: this.deps.config?.verificationLoopback });
  }

  /**
   * Creates a version: VALIDATION_ERROR naming every path validation finds; then each game mode's build must be a
   * build of the game whose upload completed (production answers 500 there; the emulator names the build).
   */
  async create(game: Game, displayName: string, config: JsonObject): Promise<string> {
    const errors = await this.validate(game, displayName, config);
    if (errors.length > 0) fail('VALIDATION_ERROR', { paths: errors.map((p) => p.join('.')).join(', ') }, { errors: errors.map((path) => ({ path })) });
    const mm = readMatchmaker(config, regionContext(game))!;
    // Each build named, read alone: a game may have many.
    for (const gm of mm.gameModes) {
      const id = gm.docker!.imageId!;
      const build = await this.deps.store.getBuild(id);
      if (build?.game_id !== game.gameId || build.complete !== 1) fail('VERSION_BUILD_INVALID', { build_id: id, game_mode: gm.nameId });
    }
    const row: VersionRow = { version_id: randomUUID(), game_id: game.gameId, display_name: displayName, config: JSON.stringify(config), create_ts: this.deps.clock.now() };
    // Another request made a version of this name since the validation looked.
    if (!(await this.deps.store.insertVersion(row))) fail('VALIDATION_ERROR', { paths: 'display-name.not-unique' }, { errors: [{ path: ['display-name', 'not-unique'] }] });
    return row.version_id;
  }

  /** Whether the version is the game's: the one it started with, or one created for it. */
  async has(game: Game, versionId: string): Promise<boolean> {
    return versionId === VERSION_ID || (await this.deps.store.getVersion(versionId))?.game_id === game.gameId;
  }

  /** A created version of the game, its config normalised as production answers it; API_NOT_FOUND otherwise. */
  async get(game: Game, versionId: string): Promise<{ version_id: string; create_ts: number; display_name: string; config: JsonObject }> {
    const row = versionId === VERSION_ID ? seededVersion(game) : await this.deps.store.getVersion(versionId);
    if (row === undefined || row.game_id !== game.gameId) fail('API_NOT_FOUND', { what: `Version ${versionId}` });
    const config = JSON.parse(row.config) as JsonObject;
    const mm = readMatchmaker(config, regionContext(game))!;
    return { version_id: row.version_id, create_ts: row.create_ts, display_name: row.display_name, config: normalised(config, mm) };
  }

  /** The next name of today (UTC) for a version of the game: YYYY.MM.DD-N. */
  async reserveName(game: Game): Promise<string> {
    const day = new Date(this.deps.clock.now()).toISOString().slice(0, 10).replace(/-/g, '.');
    return `${day}-${await this.deps.store.reserveVersionName(game.gameId, day)}`;
  }
}

/**
 * What each game mode of the version every game starts with allows: what the emulator's matchmaker always allowed
 * (tags, a find's or create's max_players, custom lobbies public or private), said in the version's own words.
 */
const SEEDED_GAME_MODE = { taggable: true, allow_dynamic_max_players: true, actions: { create: { enable_public: true, enable_private: true } } };

/**
 * The version every game starts with: its game modes, every region, no build (the emulator runs what serve says);
 * its lobbies behave as the emulator's always did.
 */
export function seededVersion(game: Game): VersionRow {
  const config = { matchmaker: { game_modes: Object.fromEntries(game.gameModes.map((m) => [m, SEEDED_GAME_MODE])) } };
  return { version_id: VERSION_ID, game_id: game.gameId, display_name: VERSION_NAME, config: JSON.stringify(config), create_ts: game.seeded ? SEEDED_CREATE_TS : game.createTs };
}

/**
 * A version's config as production answers it: every game mode with what it inherited filled in, `kv` an empty
 * object. Production answers the top-level defaults (regions, max_players*, docker, tier, idle_lobbies) and a game
 * mode's absent actions as null, which the spec does not allow: they are left out.
 */
function normalised(config: JsonObject, mm: MatchmakerConfig): JsonObject {
  const raw = (config.matchmaker ?? {}) as JsonObject;
  return {
    ...(config.cdn === undefined ? {} : { cdn: config.cdn }),
    matchmaker: {
      game_modes: Object.fromEntries(mm.gameModes.map((gm) => [gm.nameId, gameModeJson(gm)])),
      ...(raw.captcha === undefined ? {} : { captcha: raw.captcha }),
    },
    kv: {},
  };
}

function gameModeJson(gm: GameModeConfig): JsonObject {
  const d = gm.docker;
  const action = (a: { enabled: boolean; identityRequirement: string; verification: { url: string; headers: Record<string, string> } | null } | null) =>
    a && { enabled: a.enabled, identity_requirement: a.identityRequirement, ...(a.verification ? { verification: a.verification } : {}) };
  const create = gm.actions?.create;
  return {
    regions: Object.fromEntries(gm.regions.map((r) => [r.nameId, { tier: r.tier, idle_lobbies: { min: r.idleLobbies.min, max: r.idleLobbies.max } }])),
    max_players: gm.maxPlayers,
    max_players_direct: gm.maxPlayersDirect,
    max_players_party: gm.maxPlayersParty,
    ...(d && {
      docker: {
        image_id: d.imageId,
        args: d.args,
        env: d.env,
        network_mode: d.networkMode,
        ports: Object.fromEntries(
          d.ports.map((p) => [p.label, { ...(p.port === null ? {} : { port: p.port }), ...(p.portRange === null ? {} : { port_range: p.portRange }), protocol: p.protocol, proxy: p.proxy }]),
        ),
      },
    }),
    listable: gm.listable,
    taggable: gm.taggable,
    allow_dynamic_max_players: gm.allowDynamicMaxPlayers,
    ...(gm.actions && {
      actions: {
        ...(gm.actions.find ? { find: action(gm.actions.find) } : {}),
        ...(gm.actions.join ? { join: action(gm.actions.join) } : {}),
        ...(create
          ? { create: { ...action(create), enable_public: create.enablePublic, enable_private: create.enablePrivate, ...(create.maxLobbiesPerIdentity === null ? {} : { max_lobbies_per_identity: create.maxLobbiesPerIdentity }) } }
          : {}),
      },
    }),
  };
}
