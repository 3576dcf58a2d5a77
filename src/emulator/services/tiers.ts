// Production's tiers (tier-list, SERVICE-FACTS "Tiers"): each a share n/d of a job node's core, on the node model
// production lists them for (8 cores, 16 GiB: 1999 MHz, 1838 MB of memory after the kernel's and the node's own,
// 40,960 MB of disk and 750,000 MB of transfer a core), in integer division as production does.
const NODE = { cpu: 1999, memory: 1838, disk: 40_960, bandwidth: 750_000, nodeMemory: 14_704 } as const;

export interface Tier {
  tier_name_id: string;
  rivet_cores_numerator: number;
  rivet_cores_denominator: number;
  /** MHz. */
  cpu: number;
  /** MB reserved; memory_max (MB) is the hard limit: 1.5x, within the node's memory. */
  memory: number;
  memory_max: number;
  disk: number;
  bandwidth: number;
}

const share = (x: number, n: number, d: number) => Math.floor((x * n) / d);

/** Largest first, as production lists them; the same in every region. */
export const TIERS: readonly Tier[] = (
  [
    [4, 1],
    [2, 1],
    [1, 1],
    [1, 2],
    [1, 4],
    [1, 8],
    [1, 16],
  ] as const
).map(([n, d]) => ({
  tier_name_id: `basic-${n}d${d}`,
  rivet_cores_numerator: n,
  rivet_cores_denominator: d,
  cpu: share(NODE.cpu, n, d),
  memory: share(NODE.memory, n, d),
  memory_max: Math.min(Math.floor((share(NODE.memory, n, d) * 3) / 2), NODE.nodeMemory),
  disk: share(NODE.disk, n, d),
  bandwidth: share(NODE.bandwidth, n, d),
}));

/** What a game mode runs on when its version names no tier. */
export const DEFAULT_TIER = 'basic-1d1';

export function tierNamed(name: string): Tier | undefined {
  return TIERS.find((t) => t.tier_name_id === name);
}

/** RIVET_CPU: the tier's share of a core in millicores. */
export const millicores = (t: Tier): number => share(1000, t.rivet_cores_numerator, t.rivet_cores_denominator);
