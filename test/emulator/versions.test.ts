// A version's config as production validates it: POST /cloud/games/{game_id}/versions/validate answers every
// error as a path (SERVICE-FACTS "Versions, namespaces…" §1), through real HTTP and the official client; the
// reading of the config (inheritance, defaults) on its own.
import { RivetClient } from '@rivet-gg/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readMatchmaker } from '../../src/emulator/services/version-config.js';
import { validateVersion } from '../../src/emulator/services/version-validate.js';
import { GAME_ID } from '../../src/emulator/services/ids.js';
import { LOBBY_TIER } from '../../src/emulator/services/environment.js';
import { TIERS, millicores } from '../../src/emulator/services/tiers.js';
import { type Call, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { SPEC_PRESENT, Spec } from '../conformance/openapi.js';

const REGIONS = ['lnd-atl', 'lnd-fra', 'lnd-sgp'];
const IMAGE = '00000000-0000-0000-0000-000000000000';
const ctx = { regions: REGIONS, displayNames: ['0.0.1'] };
/** A valid config, one game mode, with `mode` merged into it. */
const withMode = (mode: Record<string, unknown>, top: Record<string, unknown> = {}) => ({
  matchmaker: { docker: { image_id: IMAGE, ports: { default: { port: 8080, protocol: 'https' } } }, ...top, game_modes: { default: mode } },
});
/** A valid config whose one game mode runs `image`. */
const withModeImage = (image: string) => ({ matchmaker: { docker: { image_id: image }, game_modes: { default: {} } } });
const paths = (displayName: string, config: Record<string, unknown>) => validateVersion(displayName, config, ctx).map((p) => p.join('.'));
const GM = 'config.matchmaker.game-modes.*default*';

describe('reading a version config', () => {
  it('a game mode inherits from matchmaker.*, then from the defaults; its docker block replaces the top one but for env, merged', () => {
    const mm = readMatchmaker(
      {
        matchmaker: {
          max_players: 12,
          tier: 'basic-2d1',
          regions: { 'lnd-fra': {}, 'lnd-atl': { tier: 'basic-1d4', idle_lobbies: { min: 1, max: 3 } } },
          docker: { image_id: IMAGE, env: { A: 'top', B: 'top' }, ports: { game: { port: 7777, protocol: 'udp' } } },
          game_modes: {
            plain: {},
            own: { max_players_direct: 4, regions: {}, docker: { image_id: 'other', env: { B: 'mode' }, network_mode: 'host' }, listable: false, taggable: true, actions: { create: { enabled: false } } },
          },
        },
      },
      { regions: REGIONS },
    )!;
    const [plain, own] = mm.gameModes;
    expect(plain).toMatchObject({ nameId: 'plain', maxPlayers: 12, maxPlayersDirect: 12, maxPlayersParty: 12, listable: true, taggable: false, allowDynamicMaxPlayers: false, actions: null });
    expect(plain!.regions).toEqual([
      { nameId: 'lnd-fra', known: true, tier: 'basic-2d1', idleLobbies: { min: 0, max: 0 } },
      { nameId: 'lnd-atl', known: true, tier: 'basic-1d4', idleLobbies: { min: 1, max: 3 } },
    ]);
    expect(plain!.docker).toEqual({ imageId: IMAGE, args: [], env: { A: 'top', B: 'top' }, networkMode: 'bridge', ports: [{ label: 'game', port: 7777, portRange: null, protocol: 'udp', proxy: 'game_guard' }] });
    // An empty region map is every region of the game; no ports of its own is none at all.
    expect(own!.regions.map((r) => r.nameId)).toEqual(REGIONS);
    expect(own).toMatchObject({ maxPlayers: 12, maxPlayersDirect: 4, listable: false, taggable: true });
    expect(own!.docker).toEqual({ imageId: 'other', args: [], env: { A: 'top', B: 'mode' }, networkMode: 'host', ports: [] });
    // A create block enables creates, private only, whatever it says of `enabled`.
    expect(own!.actions).toEqual({
      find: null,
      join: null,
      create: { enabled: true, identityRequirement: 'none', enablePublic: false, enablePrivate: true, maxLobbiesPerIdentity: null, verification: null },
    });
    // A port's defaults: https through the proxy.
    expect(readMatchmaker(withMode({}), { regions: REGIONS })!.gameModes[0]!.docker!.ports).toEqual([{ label: 'default', port: 8080, portRange: null, protocol: 'https', proxy: 'game_guard' }]);
  });

  it('a wrong type is API_BAD_BODY naming the field; a negative count is production\'s MATCHMAKER_INVALID_VERSION_CONFIG', () => {
    expect(() => readMatchmaker(withMode({ max_players: '8' }), ctx)).toThrow(expect.objectContaining({ code: 'API_BAD_BODY', params: { reason: 'config.matchmaker.game_modes.default.max_players must be an integer.' } }));
    expect(() => readMatchmaker(withMode({ docker: { image_id: IMAGE, ports: { a: { protocol: 'quic', port: 1 } } } }), ctx)).toThrow(
      expect.objectContaining({ code: 'API_BAD_BODY', params: { reason: 'config.matchmaker.game_modes.default.docker.ports.a.protocol must be one of http, https, tcp, tcp_tls, udp.' } }),
    );
    expect(() => readMatchmaker(withMode({ max_players: -1 }), ctx)).toThrow(expect.objectContaining({ code: 'MATCHMAKER_INVALID_VERSION_CONFIG', params: { field: 'max_players' } }));
    expect(() => readMatchmaker(withMode({ idle_lobbies: { min: -1, max: 2 } }), ctx)).toThrow(expect.objectContaining({ code: 'MATCHMAKER_INVALID_VERSION_CONFIG', params: { field: 'idle_lobbies.min' } }));
  });
});

describe('validating a version', () => {
  it('a whole, valid config has no errors', () => {
    expect(paths('2024.01.01-1', withMode({ regions: { 'lnd-atl': { tier: 'basic-1d8', idle_lobbies: { min: 2, max: 4 } } } }))).toEqual([]);
  });

  it('display names: empty, too long, odd spaces, taken', () => {
    expect(paths('', withMode({}))).toEqual(['display-name.too-short', 'display-name.invalid']);
    expect(paths('x'.repeat(129), withMode({}))).toEqual(['display-name.too-long', 'display-name.invalid']);
    for (const name of [' lead', 'trail ', 'two  spaces', 'tab\there']) expect(paths(name, withMode({}))).toEqual(['display-name.invalid']);
    expect(paths('0.0.1', withMode({}))).toEqual(['display-name.not-unique']);
    expect(paths('one space', withMode({}))).toEqual([]);
  });

  it('no matchmaker, no game mode, a bad name, player counts, regions, tiers and idle lobbies', () => {
    expect(paths('v', {})).toEqual(['config.matchmaker.missing']);
    expect(paths('v', { matchmaker: { game_modes: {} } })).toEqual(['config.matchmaker.game-modes-meta.too-few']);
    const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`m${i}`, {}]));
    expect(paths('v', { matchmaker: { docker: { image_id: IMAGE }, game_modes: many } })).toEqual(['config.matchmaker.game-modes-meta.too-many']);
    expect(paths('v', { matchmaker: { docker: { image_id: IMAGE }, game_modes: { '-bad': {} } } })).toEqual(['config.matchmaker.game-modes.*-bad*.name-id-invalid']);
    // max_players_party inherits max_players' 0.
    expect(paths('v', withMode({ max_players: 0, max_players_direct: 257 }))).toEqual([
      `${GM}.player-counts.max-players-normal.too-low`,
      `${GM}.player-counts.max-players-direct.too-high`,
      `${GM}.player-counts.max-players-party.too-low`,
    ]);
    expect(paths('v', withMode({ regions: { 'lnd-atl': {}, 'lnd-xyz': {} } }))).toEqual([`${GM}.regions.1.invalid`]);
    expect(paths('v', withMode({ regions: { 'lnd-atl': { tier: 'basic-3d1' }, 'lnd-fra': { tier: 'Basic-1d1' } } }))).toEqual([`${GM}.regions.*lnd-atl*.tier-name-id-invalid`, `${GM}.regions.*lnd-fra*.tier-name-id-invalid`]);
    expect(paths('v', withMode({ idle_lobbies: { min: 17, max: 33 } }, { regions: { 'lnd-atl': {} } }))).toEqual([`${GM}.regions.*lnd-atl*.idle-lobbies.min-too-high`, `${GM}.regions.*lnd-atl*.idle-lobbies.max-too-high`]);
    expect(paths('v', withMode({ idle_lobbies: { min: 3, max: 2 } }, { regions: { 'lnd-atl': {} } }))).toEqual([`${GM}.regions.*lnd-atl*.idle-lobbies.min-gt-max`]);
  });

  it('the runtime: none, no build, args, env', () => {
    expect(paths('v', { matchmaker: { game_modes: { default: {} } } })).toEqual([`${GM}.no-runtime`]);
    expect(paths('v', { matchmaker: { game_modes: { default: { docker: {} } } } })).toEqual([`${GM}.no-build`]);
    const docker = (d: Record<string, unknown>) => ({ matchmaker: { game_modes: { default: { docker: { image_id: IMAGE, ...d } } } } });
    expect(paths('v', docker({ args: ['a', '', 'a', 'x'.repeat(513)] }))).toEqual([`${GM}.args.1.invalid`, `${GM}.args.2.not-unique`, `${GM}.args.3.too-long`]);
    expect(paths('v', docker({ args: Array.from({ length: 65 }, (_, i) => `a${i}`) }))).toEqual([`${GM}.args-too-many`]);
    expect(paths('v', docker({ env: { OK: 'yes', EMPTY: '', ['K'.repeat(65)]: 'v', LONG: 'v'.repeat(513) } }))).toEqual([
      `${GM}.env-vars.*EMPTY*.value.invalid`,
      `${GM}.env-vars.*${'K'.repeat(65)}*.key.too-long`,
      `${GM}.env-vars.*LONG*.value.too-long`,
    ]);
    // Production's own variables, and a single port's PORT_<label> (its label as written, dashes as underscores: a
    // quirk of production's, the lobby's variable is upper case), are not the version's to set; RIVET_CPU is.
    expect(paths('v', docker({ env: { RIVET_LOBBY_ID: 'x', PORT_my_game: '1', PORT_MY_GAME: '1', RIVET_CPU: '1' }, ports: { 'my-game': { port: 80, protocol: 'http' } } }))).toEqual([
      `${GM}.env-vars.*RIVET_LOBBY_ID*.key.conflicts-with-default`,
      `${GM}.env-vars.*PORT_my_game*.key.conflicts-with-default`,
    ]);
  });

  it('ports: labels, pairs, and each combination of network mode, proxy, port and range', () => {
    const ported = (ports: Record<string, unknown>, network_mode = 'bridge') => ({ matchmaker: { game_modes: { default: { docker: { image_id: IMAGE, network_mode, ports } } } } });
    const P = `${GM}.ports`;
    expect(paths('v', ported({ 'Bad-Label': { port: 1 }, 'a--b': { port: 2 }, a: { port: 2 }, b: { port: 2, protocol: 'udp' } }))).toEqual([`${P}.*Bad-Label*.label-invalid`, `${P}.*a--b*.label-invalid`, `${P}.*a*.port-protocol-not-unique`]);
    expect(paths('v', ported(Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`p${i}`, { port: 1000 + i }]))))).toEqual([`${GM}.ports-too-many`]);
    expect(paths('v', ported({ both: { port: 1, port_range: { min: 26000, max: 26001 } }, neither: {} }))).toEqual([`${P}.*both*.duplicate-port-and-port-range`, `${P}.*neither*.missing-port-and-port-range`]);
    expect(paths('v', ported({ gg: { port_range: { min: 26000, max: 26001 } }, raw: { port: 1, proxy: 'none', protocol: 'tcp' } }))).toEqual([`${P}.*gg*.unsupported-port-range`, `${P}.*raw*.needs-host-network`]);
    expect(paths('v', ported({ raw: { port: 1, proxy: 'none', protocol: 'tcp' }, web: { port_range: { min: 26000, max: 26001 }, proxy: 'none', protocol: 'https' } }, 'host'))).toEqual([
      `${P}.*raw*.unsupported-target-port`,
      `${P}.*web*.needs-game-guard`,
    ]);
    const range = (min: number, max: number, protocol = 'udp') => ({ port_range: { min, max }, proxy: 'none', protocol });
    expect(paths('v', ported({ a: range(26000, 26010), b: range(26005, 26020), c: range(26005, 26020, 'tcp'), d: range(25999, 26000), e: range(27000, 26999) }, 'host'))).toEqual([
      `${P}.*b*.ranges-overlap`,
      `${P}.*d*.port-out-of-range`,
      `${P}.*e*.range-min-gt-max`,
    ]);
    // Through the proxy, a port on the host network is fine.
    expect(paths('v', ported({ game: { port: 7777, protocol: 'udp' } }, 'host'))).toEqual([]);
  });

  it('the captcha and the verification calls', () => {
    expect(paths('v', withMode({}, { captcha: { requests_before_reverify: 601, verification_ttl: 43_200_001 } }))).toEqual([
      'config.matchmaker.captcha.requests-before-reverify.too-high',
      'config.matchmaker.captcha.verification-ttl.too-high',
      'config.matchmaker.captcha-meta.must-have-one',
    ]);
    expect(paths('v', withMode({}, { captcha: { requests_before_reverify: 1, verification_ttl: 1, hcaptcha: { site_key: '' }, turnstile: { site_key: 'k'.repeat(31), secret_key: 's' } } }))).toEqual([
      'config.matchmaker.captcha.hcaptcha.site-key.too-short',
      'config.matchmaker.captcha.hcaptcha.secret-key.required',
      'config.matchmaker.captcha.turnstile.site-key.too-long',
    ]);
    const verified = (url: string, headers: Record<string, string> = {}) => withMode({ actions: { find: { verification: { url, headers } }, create: { verification: { url, headers } } } });
    expect(paths('v', verified('https://verify.example.com/hook', { 'x-key': 'secret' }))).toEqual([]);
    const V = (action: string) => `${GM}.${action}.verification-config`;
    expect(paths('v', verified('not a url'))).toEqual([`${V('find-config')}.url.no-host`, `${V('join-config')}.url.no-host`]);
    expect(paths('v', withMode({ actions: { find: { verification: { url: 'ftp://example.com' } } } }))).toEqual([`${V('find-config')}.url.invalid-scheme`]);
    for (const host of ['127.0.0.1', '10.1.2.3', '192.168.0.1', '169.254.169.254', '[::1]']) {
      expect(paths('v', withMode({ actions: { join: { verification: { url: `http://${host}/` } } } }))).toEqual([`${V('join-config')}.url.invalid-ip`]);
    }
    expect(paths('v', withMode({ actions: { join: { verification: { url: 'http://printer.local/' } } } }))).toEqual([`${V('join-config')}.url.invalid`]);
    expect(paths('v', withMode({ actions: { find: { verification: { url: 'https://a.example', headers: { 'bad name': 'v', ok: 'line\nbreak' } } } } }))).toEqual([
      `${V('find-config')}.headers.*bad name*.invalid-name`,
      `${V('find-config')}.headers.*ok*.invalid-value`,
    ]);
  });
});

describe('POST /cloud/games/{game_id}/versions/validate', () => {
  const OPERATION = 'cloud_games_versions_validateGameVersion';
  const TIERS_OPERATION = 'cloud_tiers_getRegionTiers';
  let emu: TestEmulator;
  // The answers checked against the published spec too (no CLI command sends these yet, so they are not among the
  // operations test/conformance replays for the CLI's sake).
  const spec = SPEC_PRESENT
    ? new Spec(undefined, [OPERATION, TIERS_OPERATION, 'cloud_games_versions_createGameVersion', 'cloud_games_versions_getGameVersionById', 'cloud_games_versions_reserveVersionName', 'cloud_games_getGameById'])
    : undefined;
  const conforms = (res: Call, operation = OPERATION) => {
    if (spec) expect(spec.checkResponse(spec.operation(operation), { status: res.status, responseHeaders: Object.fromEntries(res.headers), responseBody: res.text }), res.text).toEqual([]);
    return res;
  };
  beforeAll(async () => {
    emu = await startTestEmulator();
  });
  afterAll(() => emu?.stop());

  it('answers the errors as paths through the official client; a valid config, none', async () => {
    const client = new RivetClient({ environment: emu.endpoint, token: emu.tokens.cloud });
    const docker = { imageId: IMAGE, ports: { default: { port: 8080, protocol: 'https' as const } } };
    const valid = await client.cloud.games.versions.validateGameVersion(GAME_ID, { displayName: 'v2', config: { matchmaker: { docker, gameModes: { default: {} } } } });
    expect(valid.errors).toEqual([]);
    const invalid = await client.cloud.games.versions.validateGameVersion(GAME_ID, {
      displayName: '0.0.1',
      config: { matchmaker: { docker, gameModes: { default: { maxPlayers: 0, maxPlayersDirect: 1, maxPlayersParty: 1, regions: { 'lnd-nowhere': {} } } } } },
    });
    expect(invalid.errors.map((e) => e.path)).toEqual([['display-name', 'not-unique'], ['config', 'matchmaker', 'game-modes', '*default*', 'player-counts', 'max-players-normal', 'too-low'], ['config', 'matchmaker', 'game-modes', '*default*', 'regions', '0', 'invalid']]);
  });

  it('a bad body is API_BAD_BODY, a negative count MATCHMAKER_INVALID_VERSION_CONFIG, another game 403, no token 401', async () => {
    const path = `/cloud/games/${GAME_ID}/versions/validate`;
    const token = emu.tokens.cloud;
    const ok = conforms(await emu.call('POST', path, { token, body: { display_name: '0.0.1', config: { matchmaker: { game_modes: { default: {} } } } } }));
    expect(ok.json).toEqual({ errors: [{ path: ['display-name', 'not-unique'] }, { path: ['config', 'matchmaker', 'game-modes', '*default*', 'no-runtime'] }] });
    expect(conforms(await emu.call('POST', path, { token, body: { config: {} } })).json).toMatchObject({ code: 'API_BAD_BODY', message: 'Invalid request body: display_name is required.' });
    expect((await emu.call('POST', path, { token, body: { display_name: 'v', config: [] } })).json).toMatchObject({ code: 'API_BAD_BODY' });
    const negative = conforms(await emu.call('POST', path, { token, body: { display_name: 'v', config: withMode({ max_players: -4 }) } }));
    expect(negative.status).toBe(400);
    expect(negative.json).toMatchObject({ code: 'MATCHMAKER_INVALID_VERSION_CONFIG', message: 'The given version config was invalid: `max_players` out of bounds' });
    expect(conforms(await emu.call('POST', `/cloud/games/00000000-0000-4000-8000-000000000001/versions/validate`, { token, body: { display_name: 'v', config: {} } })).status).toBe(403);
    expect((await emu.call('POST', path, { token: null, body: { display_name: 'v', config: {} } })).status).toBe(401);
  });

  /** A build of the game, pushed whole (create, PUT, complete); `complete: false` leaves its upload open. */
  const pushBuild = async (tag: string, complete = true, game = { id: GAME_ID, token: emu.tokens.cloud }) => {
    const token = game.token;
    const created = await emu.call('POST', `/cloud/games/${game.id}/builds`, { token, body: { display_name: 'CI', image_tag: tag, image_file: { path: 'server.tar', content_length: 4 } } });
    expect(created.status, created.text).toBe(200);
    if (complete) {
      expect((await fetch(created.json.image_presigned_requests[0].url, { method: 'PUT', body: Buffer.alloc(4, 7) })).status).toBe(200);
      expect((await emu.call('POST', `/cloud/uploads/${created.json.upload_id}/complete`, { token, body: {} })).status).toBe(200);
    }
    return created.json.build_id as string;
  };

  it('a version is created with builds of the game, read back normalised, and listed by the game; its name is then taken', async () => {
    const token = emu.tokens.cloud;
    const build = await pushBuild('game-server:v1');
    const config = {
      matchmaker: {
        max_players: 16,
        docker: { image_id: build, env: { MODE: 'top' }, ports: { game: { port: 7777, protocol: 'udp' } } },
        regions: { 'lnd-fra': { tier: 'basic-1d2' } },
        game_modes: { default: {}, ranked: { max_players: 2, docker: { image_id: build, env: { MODE: 'ranked' } }, actions: { create: {} } } },
      },
      cdn: undefined,
      engine: { unity: {} },
    };
    const created = conforms(await emu.call('POST', `/cloud/games/${GAME_ID}/versions`, { token, body: { display_name: '2026.12.02-1', config } }), 'cloud_games_versions_createGameVersion');
    expect(created.status).toBe(200);
    const id = created.json.version_id as string;
    const got = conforms(await emu.call('GET', `/cloud/games/${GAME_ID}/versions/${id}`, { token }), 'cloud_games_versions_getGameVersionById');
    expect(got.json.version).toMatchObject({ version_id: id, display_name: '2026.12.02-1' });
    expect(Date.parse(got.json.version.create_ts)).toBeGreaterThan(0);
    const mm = got.json.version.config.matchmaker;
    // Production's nulls for the top-level defaults are left out (the spec does not allow them).
    expect(Object.keys(mm)).toEqual(['game_modes']);
    expect(mm.game_modes.default).toEqual({
      regions: { 'lnd-fra': { tier: 'basic-1d2', idle_lobbies: { min: 0, max: 0 } } },
      max_players: 16,
      max_players_direct: 16,
      max_players_party: 16,
      docker: { image_id: build, args: [], env: { MODE: 'top' }, network_mode: 'bridge', ports: { game: { port: 7777, protocol: 'udp', proxy: 'game_guard' } } },
      listable: true,
      taggable: false,
      allow_dynamic_max_players: false,
    });
    // The game mode's docker block replaces the top one (no ports), but for env, merged.
    expect(mm.game_modes.ranked.docker).toEqual({ image_id: build, args: [], env: { MODE: 'ranked' }, network_mode: 'bridge', ports: {} });
    expect(mm.game_modes.ranked.actions).toEqual({ create: { enabled: true, identity_requirement: 'none', enable_public: false, enable_private: true } });
    expect(got.json.version.config.kv).toEqual({});
    const game = conforms(await emu.call('GET', `/cloud/games/${GAME_ID}`, { token }), 'cloud_games_getGameById');
    expect(game.json.game.versions.map((v: { display_name: string }) => v.display_name)).toEqual(['0.0.1', '2026.12.02-1']);
    // The version every game starts with: its game modes in every region, no build of its own.
    const seeded = conforms(await emu.call('GET', `/cloud/games/${GAME_ID}/versions/${game.json.game.versions[0].version_id}`, { token }), 'cloud_games_versions_getGameVersionById');
    expect(seeded.json.version).toMatchObject({ display_name: '0.0.1', create_ts: '2024-01-01T00:00:00.000Z' });
    expect(Object.keys(seeded.json.version.config.matchmaker.game_modes)).toEqual(['default', 'duos', 'squads']);
    expect(seeded.json.version.config.matchmaker.game_modes.duos).toEqual({
      regions: Object.fromEntries(REGIONS.map((r) => [r, { tier: 'basic-1d1', idle_lobbies: { min: 0, max: 0 } }])),
      max_players: 32,
      max_players_direct: 32,
      max_players_party: 32,
      listable: true,
      // What the emulator's lobbies always allowed, said in the version's words.
      taggable: true,
      allow_dynamic_max_players: true,
      actions: { create: { enabled: true, identity_requirement: 'none', enable_public: true, enable_private: true } },
    });
    // The name is taken now: validation says so, and a second create is refused with the path.
    const again = conforms(await emu.call('POST', `/cloud/games/${GAME_ID}/versions`, { token, body: { display_name: '2026.12.02-1', config } }), 'cloud_games_versions_createGameVersion');
    expect(again.status).toBe(400);
    expect(again.json).toMatchObject({ code: 'VALIDATION_ERROR', message: 'The given resource did not pass validation: display-name.not-unique' });
  });

  it('a create that does not validate names every path and writes nothing; a build not of the game, or not uploaded, is named', async () => {
    const token = emu.tokens.cloud;
    const bad = conforms(
      await emu.call('POST', `/cloud/games/${GAME_ID}/versions`, { token, body: { display_name: ' v', config: { matchmaker: { game_modes: { default: { max_players: 0 } } } } } }),
      'cloud_games_versions_createGameVersion',
    );
    expect(bad.status).toBe(400);
    expect(bad.json.message).toBe(
      'The given resource did not pass validation: display-name.invalid, config.matchmaker.game-modes.*default*.player-counts.max-players-normal.too-low, ' +
        'config.matchmaker.game-modes.*default*.player-counts.max-players-direct.too-low, config.matchmaker.game-modes.*default*.player-counts.max-players-party.too-low, ' +
        'config.matchmaker.game-modes.*default*.no-runtime',
    );
    const open = await pushBuild('game-server:open', false);
    // A complete build of another game is not one of this game's.
    const other = (await emu.call('POST', '/_emulator/games', { body: {} })).json as { game_id: string; tokens: { cloud: string } };
    const othersBuild = await pushBuild('game-server:other', true, { id: other.game_id, token: other.tokens.cloud });
    for (const image of [open, othersBuild, '00000000-0000-4000-8000-00000000000b']) {
      const res = conforms(
        await emu.call('POST', `/cloud/games/${GAME_ID}/versions`, { token, body: { display_name: `v-${image}`, config: withModeImage(image) } }),
        'cloud_games_versions_createGameVersion',
      );
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ code: 'VERSION_BUILD_INVALID', message: `Build ${image} of game mode default is not a build of this game whose upload completed.` });
    }
    const game = await emu.call('GET', `/cloud/games/${GAME_ID}`, { token });
    expect(game.json.game.versions.map((v: { display_name: string }) => v.display_name)).not.toContain(' v');
    expect((await emu.call('GET', `/cloud/games/${GAME_ID}/versions/00000000-0000-4000-8000-00000000000c`, { token })).status).toBe(404);
  });

  it('reserve-name: YYYY.MM.DD-N of today (UTC), one more each call', async () => {
    const token = emu.tokens.cloud;
    const day = new Date().toISOString().slice(0, 10).replace(/-/g, '.');
    const first = conforms(await emu.call('POST', `/cloud/games/${GAME_ID}/versions/reserve-name`, { token }), 'cloud_games_versions_reserveVersionName');
    const [, n] = /^(\d{4}\.\d{2}\.\d{2})-(\d+)$/.exec(first.json.version_display_name)!.slice(1);
    expect(first.json.version_display_name).toBe(`${day}-${n}`);
    const second = await emu.call('POST', `/cloud/games/${GAME_ID}/versions/reserve-name`, { token });
    expect(second.json.version_display_name).toBe(`${day}-${Number(n) + 1}`);
  });

  it('GET /cloud/region-tiers: production\'s seven tiers with its figures, for any caller (production checks no token)', async () => {
    const res = conforms(await emu.call('GET', '/cloud/region-tiers', { token: null }), TIERS_OPERATION);
    expect(res.status).toBe(200);
    const row = (t: Record<string, number | string>) => [t.tier_name_id, t.rivet_cores_numerator, t.rivet_cores_denominator, t.cpu, t.memory, t.disk, t.bandwidth, t.price_per_second].join(' ');
    expect(res.json.tiers.map(row)).toEqual([
      'basic-4d1 4 1 7996 7352 163840 3000000 0',
      'basic-2d1 2 1 3998 3676 81920 1500000 0',
      'basic-1d1 1 1 1999 1838 40960 750000 0',
      'basic-1d2 1 2 999 919 20480 375000 0',
      'basic-1d4 1 4 499 459 10240 187500 0',
      'basic-1d8 1 8 249 229 5120 93750 0',
      'basic-1d16 1 16 124 114 2560 46875 0',
    ]);
  });
});

describe('the tiers a lobby runs on', () => {
  it("memory_max is 1.5x the memory within the node's, RIVET_CPU the share of a core in millicores; basic-1d1 is what every lobby runs on today", () => {
    expect(TIERS.map((t) => `${t.tier_name_id} ${t.memory_max} ${millicores(t)}`)).toEqual([
      'basic-4d1 11028 4000',
      'basic-2d1 5514 2000',
      'basic-1d1 2757 1000',
      'basic-1d2 1378 500',
      'basic-1d4 688 250',
      'basic-1d8 343 125',
      'basic-1d16 171 62',
    ]);
    expect(LOBBY_TIER).toEqual({ name: 'basic-1d1', cpu: 1000, memory: 1838 * 2 ** 20, memoryMax: 2757 * 2 ** 20 });
  });
});
