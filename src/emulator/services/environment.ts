// What a lobby's process is given: production's environment variables (SERVICE-FACTS.md, "What a lobby's process
// is given"), computed from the lobby's record. `emulator lobby env` prints it for a server started by hand; a
// runner that starts the server itself calls lobbyEnvironment with the ports it has.
import { NAMESPACE_NAME, VERSION_ID, VERSION_NAME, lobbyGroupUuid, regionUuid } from './ids.js';
import type { LobbyRow } from '../stores/store.js';
import { DEFAULT_TIER, millicores, tierNamed } from './tiers.js';

/** A lobby's port: one port, or a range; its protocol when its game mode's settings name one (else tcp). */
export type LobbyPort = ({ port: number } | { min: number; max: number }) & { protocol?: 'tcp' | 'udp' | 'http' };

const MiB = 1024 * 1024;
const tier = tierNamed(DEFAULT_TIER)!;
/**
 * The tier every lobby runs on until versions (and their tiers) exist, basic-1d1: its share of a core in millicores,
 * its memory (the reservation) and memory_max (the hard limit) in bytes. A container is held to it
 * (runtime/docker.ts, containerLimits); its process is told it (RIVET_CPU, RIVET_MEMORY*).
 */
export const LOBBY_TIER = { name: DEFAULT_TIER, cpu: millicores(tier), memory: tier.memory * MiB, memoryMax: tier.memory_max * MiB } as const;
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
}

/** The variables in production's order; the label of a port has `-` turned into `_`. */
export function lobbyEnvironment({ lobby, endpoint, token, ports = lobbyPorts(lobby) }: EnvironmentInput): Record<string, string> {
  const gameModeId = lobbyGroupUuid(lobby.game_mode);
  const max = String(lobby.max_players);
  const env: Record<string, string> = {
    RIVET_API_ENDPOINT: endpoint,
    RIVET_TOKEN: token,
    RIVET_LOBBY_TOKEN: token,
    RIVET_LOBBY_ID: lobby.lobby_id,
    RIVET_NAMESPACE_ID: lobby.namespace_id,
    RIVET_NAMESPACE_NAME: NAMESPACE_NAME,
    RIVET_VERSION_ID: VERSION_ID,
    RIVET_VERSION_NAME: VERSION_NAME,
    RIVET_GAME_MODE_ID: gameModeId,
    RIVET_GAME_MODE_NAME: lobby.game_mode,
    RIVET_LOBBY_GROUP_ID: gameModeId,
    RIVET_LOBBY_GROUP_NAME: lobby.game_mode,
    RIVET_REGION_ID: regionUuid(lobby.region_id),
    RIVET_REGION_NAME: lobby.region_id,
    RIVET_MAX_PLAYERS_NORMAL: max,
    RIVET_MAX_PLAYERS_DIRECT: max,
    RIVET_MAX_PLAYERS_PARTY: max,
    RIVET_CPU: String(LOBBY_TIER.cpu),
    RIVET_MEMORY: String(LOBBY_TIER.memory),
    RIVET_MEMORY_OVERSUBSCRIBE: String(LOBBY_TIER.memoryMax),
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
