// GET /cloud/region-tiers (cloud_tiers_getRegionTiers): production's tiers. Production checks no token here, nor does
// the emulator: the list is the same for every caller.
import { TIERS } from '../services/tiers.js';
import type { Reply } from './context.js';

export async function getRegionTiers(): Promise<Reply> {
  const tiers = TIERS.map(({ memory_max: _, ...t }) => ({ ...t, price_per_second: 0 }));
  return { status: 200, json: { tiers } };
}
