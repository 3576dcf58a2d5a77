// What a lobby's process is given: production's environment variables (SERVICE-FACTS.md, "What a lobby's process
// is given"), computed from the lobby's record. `emulator lobby env` prints it for a server started by hand; a
// runner that starts the server itself calls lobbyEnvironment with the ports it has.
import { lobbyGroupUuid, regionUuid } from './ids.js';
import type { LobbyRow } from '../stores/store.js';
import { DEFAULT_TIER, millicores, tierNamed } from './tiers.js';

/** A lobby's port: one port, or a range; its protocol when its game mode's settings name one (else tcp). */
export type LobbyPort = ({ port: number } | { min: number; max: number }) & { protocol?: 'tcp' | 'udp' | 'http' };

const MiB = 1024 * 1024;

/**
 * A tier as a lobby runs on it: its share of a core in millicores, its memory (the reservation) and memory_max (the
 * hard limit) in bytes. A container is held to it (runtime/docker.ts, containerLimits); its process is told it
 * (RIVET_CPU, RIVET_MEMORY*).
 */
export function lobbyTier(name: string) {
  const tier = tierNamed(name) ?? tierNamed(DEFAULT_TIER)!;
  return { name: tier.tier_name_id, cpu: millicores(tier), memory: tier.memory * MiB, memoryMax: tier.memory_max * MiB } as const;
}

/** The default tier, basic-1d1: what a command's cgroup is held to, and what a lobby's metrics are measured against. */
export const LOBBY_TIER = lobbyTier(DEFAULT_TIER);

/** What a lobby's process is told of the version it was made with (services/lobby-versions.ts). */
export interface LobbyVersion {
  versionId: string;
  versionName: string;
  /** Its namespace's name id (prod, staging, …). */
  namespaceName: string;
  /** Its game mode's environment in that version (top-level docker env, then the game mode's). */
  env: Record<string, string>;
  /** The tier of its game mode in its region. */
  tier: string;
  /** The build its game mode runs in that version (docker.image_id); null for a version with none (0.0.1). */
  buildId: string | null;
}
/**
 * Processes and threads a lobby's server may hold at once (a container's PidsLimit, a process's cgroup pids.max): a
 * game server's threads with room, not a fork bomb. Production states none; this is the emulator's own.
 */
export const LOBBY_PIDS_LIMIT = 512;

/** The ports a lobby record holds, by label. */
export function lobbyPorts(lobby: Pick<LobbyRow, 'ports'>): Record<string, LobbyPort> {
  return JSON.parse(lobby.ports) as Record<string, LobbyPort>;
}

export interface EnvironmentInput {
  lobby: LobbyRow;
  /** The API endpoint the process calls (RIVET_API_ENDPOINT). */
  endpoint: string;
  /** The lobby token (RIVET_TOKEN). */
  token: string;
  /** Default: the lobby's own ports. */
  ports?: Record<string, LobbyPort>;
  version: LobbyVersion;
}

/**
 * The variables in production's order, after the version's own (which never override them: the version's
 * validation refuses those names); the label of a port has `-` turned into `_`.
 */
export function lobbyEnvironment({ lobby, endpoint, token, ports = lobbyPorts(lobby), version }: EnvironmentInput): Record<string, string> {
  const gameModeId = lobbyGroupUuid(lobby.game_mode);
  const tier = lobbyTier(version.tier);
  const env: Record<string, string> = {
    ...version.env,
    RIVET_API_ENDPOINT: endpoint,
    RIVET_TOKEN: token,
    RIVET_LOBBY_TOKEN: token,
    RIVET_LOBBY_ID: lobby.lobby_id,
    RIVET_NAMESPACE_ID: lobby.namespace_id,
    RIVET_NAMESPACE_NAME: version.namespaceName,
    RIVET_VERSION_ID: version.versionId,
    RIVET_VERSION_NAME: version.versionName,
    RIVET_GAME_MODE_ID: gameModeId,
    RIVET_GAME_MODE_NAME: lobby.game_mode,
    RIVET_LOBBY_GROUP_ID: gameModeId,
    RIVET_LOBBY_GROUP_NAME: lobby.game_mode,
    RIVET_REGION_ID: regionUuid(lobby.region_id),
    RIVET_REGION_NAME: lobby.region_id,
    RIVET_MAX_PLAYERS_NORMAL: String(lobby.max_players),
    RIVET_MAX_PLAYERS_DIRECT: String(lobby.max_players_direct),
    RIVET_MAX_PLAYERS_PARTY: String(lobby.max_players_party),
    RIVET_CPU: String(tier.cpu),
    RIVET_MEMORY: String(tier.memory),
    RIVET_MEMORY_OVERSUBSCRIBE: String(tier.memoryMax),
  };
  if (lobby.lobby_config !== null) env.RIVET_LOBBY_CONFIG = lobby.lobby_config;
  if (lobby.tags !== '{}') env.RIVET_LOBBY_TAGS = lobby.tags;
  for (const [label, port] of Object.entries(ports)) {
    const name = label.replace(/-/g, '_');
    if ('port' in port) env[`PORT_${name}`] = String(port.port);
    else {
      env[`PORT_RANGE_MIN_${name}`] = String(port.min);
      env[`PORT_RANGE_MAX_${name}`] = String(port.max);
    }
  }
  return env;
}
