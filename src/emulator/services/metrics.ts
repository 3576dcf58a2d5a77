// A lobby's job metrics, from the samples of its server that the runtime measured (runtime/servers.ts). A lobby
// whose server nothing measures has none: the emulator never makes them up.

import { LOBBY_TIER } from './environment.js';

export const MAX_SAMPLES = 30;
/**
 * Allocated memory in MB (Nomad's, which are MiB), as the spec's `allocated_memory` says: the lobby's tier's
 * reservation, the RIVET_MEMORY its server is given and the memory its container or cgroup reserves (`memory`, bytes;
 * the default tier's when the lobby's version is not known).
 */
export const allocatedMemoryMb = (memory = LOBBY_TIER.memory): number => memory / (1024 * 1024);

export interface JobMetrics {
  job: string;
  /** Percent of one core, 0–100. */
  cpu: number[];
  /** Bytes in use (allocated_memory is MB, as Rivet sent it; samples are bytes). */
  memory: number[];
  allocated_memory: number;
}

const round2 = (v: number): number => Math.round(v * 100) / 100;

/** The metrics of a lobby whose server an emulator runs: its runner's samples (CPU percent of one core, bytes resident). */
export function sampledMetrics(lobbyId: string, samples: readonly { cpu: number; memory: number }[], allocatedMb = allocatedMemoryMb()): JobMetrics {
  const kept = samples.slice(-MAX_SAMPLES);
  return { job: `lobby-${lobbyId}`, cpu: kept.map((s) => round2(s.cpu)), memory: kept.map((s) => Math.round(s.memory)), allocated_memory: allocatedMb };
}
