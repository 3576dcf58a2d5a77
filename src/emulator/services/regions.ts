// A game's regions: the one a create or find names (or the first), and the regions list.
import { fail } from '../errors.js';
import type { Game } from './games.js';
import { nameList } from './names.js';

/** Where a development token's mock lobbies are. */
export const DEV_REGION = { id: 'dev-lcl', name: 'Local' };
/**
 * Production's regions (Linode), by the name ids real configs use (`lnd-sfo`): `lnd-` and the universal region's
 * short name, with its display name and where its datacenter is, as rivet-gg/rivet's region-get has them
 * (svc/pkg/region/ops/get: universal_region, universal_region_short, _display_name, _coords). A version may name any
 * of them: a game mode in lnd-sfo runs its lobbies there, though the game's own regions (the config's) are what a
 * game mode naming none runs in.
 */
export const PRODUCTION_REGIONS: readonly { id: string; name: string; latitude: number; longitude: number }[] = Object.freeze([
  { id: 'lnd-atl', name: 'Atlanta', latitude: 33.74819, longitude: -84.39086 },
  { id: 'lnd-dfw', name: 'Dallas', latitude: 32.77557, longitude: -96.7956 },
  { id: 'lnd-fra', name: 'Frankfurt', latitude: 50.11044, longitude: 8.68183 },
  { id: 'lnd-lon', name: 'London', latitude: 51.50335, longitude: -0.0794 },
  { id: 'lnd-mba', name: 'Mumbai', latitude: 18.9401, longitude: 72.83466 },
  { id: 'lnd-nyc', name: 'New York City', latitude: 40.71298, longitude: -74.0072 },
  { id: 'lnd-sfo', name: 'San Francisco', latitude: 37.77938, longitude: -122.41843 },
  { id: 'lnd-sgp', name: 'Singapore', latitude: 1.2798, longitude: 103.83728 },
  { id: 'lnd-syd', name: 'Sydney', latitude: -33.87271, longitude: 151.20569 },
  { id: 'lnd-tok', name: 'Tokyo', latitude: 35.68951, longitude: 139.6917 },
  { id: 'lnd-tor', name: 'Toronto', latitude: 43.65161, longitude: -79.38313 },
  { id: 'lnd-dca', name: 'Washington DC', latitude: 38.89212, longitude: -77.00909 },
]);
const PRODUCTION = new Map(PRODUCTION_REGIONS.map((r) => [r.id, r]));

/** The regions a version of the game may name: the game's (its config's), then production's others. */
export function knownRegions(game: Game): { id: string; name: string }[] {
  const own = new Set(game.regions.map((r) => r.id));
  return [...game.regions, ...PRODUCTION_REGIONS.filter((r) => !own.has(r.id)).map(({ id, name }) => ({ id, name }))];
}

/** What a version's config is read against: the game's regions (a game mode naming none runs in them), and every known one. */
export function regionContext(game: Game): { regions: string[]; known: string[] } {
  return { regions: game.regions.map((r) => r.id), known: knownRegions(game).map((r) => r.id) };
}

export interface RegionInfo {
  region_id: string;
  provider_display_name: string;
  region_display_name: string;
  datacenter_coord: { latitude: number; longitude: number };
  datacenter_distance_from_client: { kilometers: number; miles: number };
}

/**
 * The region named (the game's, or one of production's a version may name), or the game's first (no geo-location
 * here: "closest region" is the first configured one).
 */
export function regionOf(game: Game, regionId: string | undefined): { id: string; name: string } {
  const region = regionId === undefined ? game.regions[0]! : (game.regions.find((r) => r.id === regionId) ?? knownRegions(game).find((r) => r.id === regionId));
  if (region === undefined)
    fail('MATCHMAKER_REGION_NOT_FOUND', { region: regionId ?? '', known: nameList(game.regions.map((r) => `${r.id} (${r.name})`)) });
  return region;
}

/**
 * The regions of the regions list and the lobby list, as production's: every region a game mode of the namespace's
 * version runs in (the game's first, then production's others, each once).
 */
export function versionRegions(game: Game, gameModes: readonly { regions: readonly { nameId: string }[] }[]): RegionInfo[] {
  const enabled = new Set(gameModes.flatMap((m) => m.regions.map((r) => r.nameId)));
  return knownRegions(game).filter((r) => enabled.has(r.id)).map(regionInfo);
}

export function regionInfo(region: { id: string; name: string }): RegionInfo {
  return {
    region_id: region.id,
    provider_display_name: region.id === DEV_REGION.id ? 'Local' : 'Linode',
    region_display_name: region.name,
    datacenter_coord: coordsOf(region.id),
    // The client's location is unknown here, as production answers then.
    datacenter_distance_from_client: { kilometers: 0, miles: 0 },
  };
}

function coordsOf(id: string): { latitude: number; longitude: number } {
  const r = PRODUCTION.get(id);
  return r === undefined ? { latitude: 0, longitude: 0 } : { latitude: r.latitude, longitude: r.longitude };
}
