// Made-up but stable job metrics for a running lobby: each sample is a pure function of (lobby id, sample index),
// so successive calls show the same history sliding along as time passes.

export const SAMPLE_INTERVAL_MS = 5_000;
export const MAX_SAMPLES = 30;
/** Allocated memory in MB, as the spec's `allocated_memory` says. */
export const ALLOCATED_MEMORY_MB = 512;

const MB = 1024 * 1024;
// Each sample replays this many steps of its walk; 0.85^48 ≈ 4e-4, so the truncation is invisible.
const WARMUP_STEPS = 48;
const DECAY = 0.85;

export interface JobMetrics {
  job: string;
  /** Percent of one core, 0–100. */
  cpu: number[];
  /** Bytes in use (allocated_memory is MB, as Rivet sent it; samples are bytes). */
  memory: number[];
  allocated_memory: number;
}

/** Uniform in [-1, 1), from a 32-bit integer hash of (seed, step). */
function noise(seed: number, step: number): number {
  let h = (seed ^ Math.imul(step + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  h = (h ^ (h >>> 16)) >>> 0;
  return (h / 2 ** 32) * 2 - 1;
}

/** A mean-reverting walk (AR(1)) around 0, standard deviation about 1. */
function walk(seed: number, index: number): number {
  let x = 0;
  for (let step = Math.max(0, index - WARMUP_STEPS); step <= index; step++) x = DECAY * x + noise(seed, step);
  return x;
}

const round2 = (v: number): number => Math.round(v * 100) / 100;
const clamp = (v: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, v));

export function lobbyMetrics(lobbyId: string, startTs: number, nowMs: number): JobMetrics {
  const hex = lobbyId.replace(/-/g, '');
  const cpuSeed = parseInt(hex.slice(0, 8), 16) >>> 0;
  const memSeed = parseInt(hex.slice(8, 16), 16) >>> 0;
  const count = Math.floor(Math.max(0, nowMs - startTs) / SAMPLE_INTERVAL_MS) + 1;
  const cpu: number[] = [];
  const memory: number[] = [];
  for (let i = Math.max(0, count - MAX_SAMPLES); i < count; i++) {
    cpu.push(round2(clamp(30 + 10 * walk(cpuSeed, i), 0.5, 100)));
    const mb = clamp(ALLOCATED_MEMORY_MB * (0.4 + 0.08 * walk(memSeed, i)), 16, ALLOCATED_MEMORY_MB);
    memory.push(Math.round(mb * MB));
  }
  return { job: `lobby-${lobbyId}`, cpu, memory, allocated_memory: ALLOCATED_MEMORY_MB };
}

/** The metrics of a lobby whose server runs here: its runner's samples (CPU percent of one core, bytes resident). */
export function sampledMetrics(lobbyId: string, samples: readonly { cpu: number; memory: number }[]): JobMetrics {
  const kept = samples.slice(-MAX_SAMPLES);
  return { job: `lobby-${lobbyId}`, cpu: kept.map((s) => round2(s.cpu)), memory: kept.map((s) => Math.round(s.memory)), allocated_memory: ALLOCATED_MEMORY_MB };
}
