// A game's regions: the one a create or find names (or the first), and the regions list.
import { fail } from '../errors.js';
import type { Game } from './games.js';
import { nameList } from './lobby-checks.js';

/** Where a development token's mock lobbies are. */
export const DEV_REGION = { id: 'dev-lcl', name: 'Local' };
// Where the datacenters of the default regions are, for the regions list; any other region is at 0, 0.
const COORDS: Record<string, { latitude: number; longitude: number }> = {
  'lnd-atl': { latitude: 33.749, longitude: -84.388 },
  'lnd-fra': { latitude: 50.1109, longitude: 8.6821 },
  'lnd-sgp': { latitude: 1.3521, longitude: 103.8198 },
};

export interface RegionInfo {
  region_id: string;
  provider_display_name: string;
  region_display_name: string;
  datacenter_coord: { latitude: number; longitude: number };
  datacenter_distance_from_client: { kilometers: number; miles: number };
}

/** The region named, or the first (no geo-location here: "closest region" is the first configured one). */
export function regionOf(game: Game, regionId: string | undefined): { id: string; name: string } {
  const region = regionId === undefined ? game.regions[0]! : game.regions.find((r) => r.id === regionId);
  if (region === undefined)
    fail('MATCHMAKER_REGION_NOT_FOUND', { region: regionId ?? '', known: nameList(game.regions.map((r) => `${r.id} (${r.name})`)) });
  return region;
}

/** The regions list: the game's, or the local one for a development token. */
export function regionList(game: Game, mode: 'public' | 'dev'): RegionInfo[] {
  return mode === 'dev' ? [regionInfo(DEV_REGION)] : game.regions.map(regionInfo);
}

export function regionInfo(region: { id: string; name: string }): RegionInfo {
  return {
    region_id: region.id,
    provider_display_name: region.id === DEV_REGION.id ? 'Local' : 'Linode',
    region_display_name: region.name,
    datacenter_coord: COORDS[region.id] ?? { latitude: 0, longitude: 0 },
    // The client's location is unknown here, as production answers then.
    datacenter_distance_from_client: { kilometers: 0, miles: 0 },
  };
}
