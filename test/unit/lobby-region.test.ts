// lobby logs names the lobby's region as lobby create did, `Atlanta (lnd-atl)`, when the game's regions (asked once
// of the service) list its UUID; otherwise it shows the id the logs gave. The names come from the service: any
// answer the spec allows must do, and none may break the view.
import { describe, expect, it } from 'vitest';
import type { GetGameResponse, LobbyLogsResponse } from '../../src/api/types.js';
import { visibleWidth } from '../../src/output/format.js';
import { formatLobbyLogs, regionNames } from '../../src/output/views/lobby.js';
import { plain } from '../helpers/cli.js';

const NOW = Date.UTC(2026, 10, 21, 10, 46, 15);
const ATL = '8d38dfcb-f2cc-56f0-8353-6a3423b04e15';
const logs: LobbyLogsResponse = {
  lobby: {
    lobby_id: '2f1c0a4e-1b2c-4d3e-8f90-a1b2c3d4e5f6',
    namespace_id: '9d2c7e41-5b6a-4f3e-9c8d-7a6b5c4d3e2f',
    lobby_group_name_id: 'default',
    region_id: ATL,
    create_ts: '2026-11-21T10:42:03.000Z',
    status: { running: {} },
  },
};
const region = (id: string, nameId: string, name: string) => ({
  region_id: id,
  region_name_id: nameId,
  region_display_name: name,
  provider: 'linode',
  universal_region: 'atlanta',
  provider_display_name: 'Linode',
});
const game = (available_regions: unknown[]): GetGameResponse => ({ game: { game_id: 'g', available_regions } }) as GetGameResponse;
const term = (columns: number) => ({ tty: true, columns, now: NOW, utc: true, color: true, chart: false });
const pipe = { ...term(80), tty: false, color: false };
/** The Region line (at 40 columns the state badge takes a line of its own above it). */
const regionLine = (text: string) => plain(text).split('\n').find((l) => l.startsWith('Region'));

describe('lobby logs: the region by name', () => {
  const regions = regionNames(game([region('11111111-2222-4333-8444-555555555555', 'lnd-fra', 'Frankfurt'), region(ATL.toUpperCase(), 'lnd-atl', 'Atlanta')]));

  it.each([40, 80, 120])('at %i columns: `Region  Atlanta (lnd-atl)`, as lobby create said it', (columns) => {
    expect(regionLine(formatLobbyLogs(logs, { ...term(columns), regions }))).toBe('Region     Atlanta (lnd-atl)');
  });

  it('piped: region_id stays, and `region` gives the name id as lobby create prints it', () => {
    const text = formatLobbyLogs(logs, { ...pipe, regions });
    expect(text).toContain(`region_id\t${ATL}\nregion\tlnd-atl\nnamespace_id\t`);
  });

  it('the id when the names are unknown: no lookup, a failed one, or a list without this region', () => {
    for (const r of [undefined, regionNames(game([])), regionNames(game([region('11111111-2222-4333-8444-555555555555', 'lnd-fra', 'Frankfurt')]))]) {
      expect(regionLine(formatLobbyLogs(logs, { ...term(80), regions: r }))).toBe(`Region     ${ATL}`);
      expect(formatLobbyLogs(logs, { ...pipe, regions: r })).not.toMatch(/^region\t/m);
    }
  });

  it('names from the service are made safe for the terminal and cut to the width like any text', () => {
    const hostile = regionNames(game([region(ATL, 'lnd-\x1b[2Jatl', `Atl\x1b]0;pwned\x07anta ${'東'.repeat(60)}`)]));
    for (const columns of [40, 80, 120]) {
      const line = formatLobbyLogs(logs, { ...term(columns), color: false, regions: hostile }).split('\n').find((l) => l.startsWith('Region'))!;
      expect(line).not.toMatch(/\x1b|\x07/);
      expect(line).toMatch(/^Region {5}Atl.*anta /);
      expect(visibleWidth(line)).toBeLessThanOrEqual(columns - 1);
    }
  });

  it('regionNames keeps only entries the spec allows, from any answer, and holds 100,000 regions', () => {
    const odd = [null, 7, 'x', {}, { region_id: 1, region_name_id: 'a', region_display_name: 'A' }, { region_id: ATL, region_name_id: 'lnd-atl' }];
    expect(regionNames(game(odd)).size).toBe(0);
    expect(regionNames({} as GetGameResponse).size).toBe(0);
    expect(regionNames({ game: { available_regions: 'none' } } as unknown as GetGameResponse).size).toBe(0);
    const many = Array.from({ length: 100_000 }, (_, i) => region(`${String(i).padStart(8, '0')}-0000-4000-8000-000000000000`, `r-${i}`, `Region ${i}`));
    const names = regionNames(game([...many, region(ATL, 'lnd-atl', 'Atlanta')]));
    expect(names.size).toBe(100_001);
    expect(names.get(ATL)).toEqual({ name_id: 'lnd-atl', display_name: 'Atlanta' });
  });
});
