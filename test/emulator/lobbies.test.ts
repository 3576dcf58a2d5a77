import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GAME_ID, NAMESPACE_ID } from '../../src/emulator/index.js';
import { signToken } from '../../src/emulator/services/tokens.js';
import { expectErrorShape, startTestEmulator, type TestEmulator, UUID_RE } from '../helpers/emulator.js';

let t: TestEmulator;
beforeAll(async () => {
  t = await startTestEmulator({ startDelayMs: 0, readyDelayMs: 0 });
});
afterAll(async () => {
  await t.stop();
});

const create = (body: unknown, token: string | null = t.tokens.public) =>
  t.call('POST', '/matchmaker/lobbies/create', { token, body });

describe('POST /matchmaker/lobbies/create', () => {
  it('creates a lobby and answers lobby, ports and a player token', async () => {
    const res = await create({ game_mode: 'duos', region: 'lnd-fra', tags: { map: 'dust' }, max_players: 4 });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('rvt-ray-id')).toMatch(UUID_RE);
    const { lobby, ports, player } = res.json;
    expect(lobby.lobby_id).toMatch(UUID_RE);
    expect(lobby.region).toEqual({ region_id: 'lnd-fra', display_name: 'Frankfurt' });
    // The deprecated duplicates the spec still requires.
    expect(lobby.ports).toEqual(ports);
    expect(lobby.player).toEqual(player);
    expect(ports.default).toEqual({
      host: `127.0.0.1:${ports.default.port}`,
      hostname: '127.0.0.1',
      port: ports.default.port,
      is_tls: false,
    });
    expect(ports.default.port).toBeGreaterThan(0);
    expect(ports['game-range'].port).toBeUndefined();
    expect(ports['game-range'].host).toBeUndefined();
    expect(ports['game-range'].is_tls).toBe(false);
    expect(ports['game-range'].port_range.max - ports['game-range'].port_range.min).toBe(9);
    // `player.` and a JWT: three base64url parts, HS256 header, claims naming the lobby.
    const [label, head, claims, sig] = player.token.split('.');
    expect(label).toBe('player');
    expect(sig).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(JSON.parse(Buffer.from(head, 'base64url').toString())).toEqual({ alg: 'HS256', typ: 'JWT' });
    const decoded = JSON.parse(Buffer.from(claims, 'base64url').toString());
    expect(decoded.lobby_id).toBe(lobby.lobby_id);
    expect(decoded.namespace_id).toBe(NAMESPACE_ID);
    expect(decoded.player_id).toMatch(UUID_RE);
  });

  it('defaults to the first configured region', async () => {
    const res = await create({ game_mode: 'default' });
    expect(res.status).toBe(200);
    expect(res.json.lobby.region).toEqual({ region_id: 'lnd-atl', display_name: 'Atlanta' });
  });

  it('accepts any JSON for lobby_config and verification_data, and a well-formed captcha', async () => {
    const res = await create({
      game_mode: 'squads',
      publicity: 'private',
      lobby_config: [1, { nested: true }],
      verification_data: 'anything',
      captcha: { hcaptcha: { client_response: 'x' }, turnstile: { client_response: 'y' } },
    });
    expect(res.status).toBe(200);
  });

  it('works without a token when the namespace is tokenless', async () => {
    const res = await create({ game_mode: 'default' }, null);
    expect(res.status).toBe(200);
    const logs = await t.call(
      'GET',
      `/cloud/games/${GAME_ID}/namespaces/${NAMESPACE_ID}/logs/lobbies/${res.json.lobby.lobby_id}`,
      { token: t.tokens.cloud },
    );
    expect(logs.status).toBe(200);
  });

  it('answers a dev token with a mock lobby that is not stored', async () => {
    const res = await create({ game_mode: 'default' }, t.tokens.dev);
    expect(res.status).toBe(200);
    expect(res.json.lobby.lobby_id).toBe('00000000-0000-0000-0000-000000000000');
    expect(res.json.lobby.region).toEqual({ region_id: 'dev-lcl', display_name: 'Local' });
    expect(res.json.player.token).toMatch(/^dev_player\./);
    expect(res.json.ports.default.is_tls).toBe(false);
    const logs = await t.call(
      'GET',
      `/cloud/games/${GAME_ID}/namespaces/${NAMESPACE_ID}/logs/lobbies/${res.json.lobby.lobby_id}`,
      { token: t.tokens.cloud },
    );
    expectErrorShape(logs, 404, 'API_NOT_FOUND');
  });

  it('still validates the body for a dev token', async () => {
    expectErrorShape(await create({ game_mode: 'nope' }, t.tokens.dev), 400, 'MATCHMAKER_GAME_MODE_NOT_FOUND');
  });

  describe('auth', () => {
    it('401 for a header without the Bearer prefix', async () => {
      const res = await t.call('POST', '/matchmaker/lobbies/create', {
        body: { game_mode: 'default' },
        headers: { authorization: t.tokens.public },
      });
      expectErrorShape(res, 401, 'API_UNAUTHORIZED');
    });

    it('401 for a malformed token', async () => {
      expectErrorShape(await create({ game_mode: 'default' }, 'not-a-token'), 401, 'API_UNAUTHORIZED');
    });

    it('401 for a token with a bad signature', async () => {
      const [kind, claims] = t.tokens.public.split('.');
      const forged = `${kind}.${claims}.${Buffer.alloc(32, 1).toString('base64url')}`;
      expectErrorShape(await create({ game_mode: 'default' }, forged), 401, 'API_UNAUTHORIZED');
    });

    it('401 for a token signed with another secret', async () => {
      const other = signToken(Buffer.alloc(32, 7), { kind: 'pub', game_id: GAME_ID, namespace_id: NAMESPACE_ID });
      expectErrorShape(await create({ game_mode: 'default' }, other), 401, 'API_UNAUTHORIZED');
    });

    it('403 for a cloud token', async () => {
      expectErrorShape(await create({ game_mode: 'default' }, t.tokens.cloud), 403, 'API_FORBIDDEN');
    });

    it('403 for a public token of another namespace', async () => {
      const other = signToken(t.secret, {
        kind: 'pub',
        game_id: GAME_ID,
        namespace_id: '11111111-2222-4333-8444-555555555555',
      });
      expectErrorShape(await create({ game_mode: 'default' }, other), 403, 'API_FORBIDDEN');
    });
  });

  describe('validation', () => {
    const cases: [string, unknown, string][] = [
      ['missing game_mode', {}, 'API_BAD_BODY'],
      ['game_mode not a string', { game_mode: 3 }, 'API_BAD_BODY'],
      ['unknown game mode', { game_mode: 'solo' }, 'MATCHMAKER_GAME_MODE_NOT_FOUND'],
      ['unknown region', { game_mode: 'default', region: 'lnd-mars' }, 'MATCHMAKER_REGION_NOT_FOUND'],
      ['bad publicity', { game_mode: 'default', publicity: 'friends' }, 'API_BAD_BODY'],
      [
        'nine tags',
        { game_mode: 'default', tags: Object.fromEntries([...Array(9).keys()].map((i) => [`t${i}`, 'v'])) },
        'MATCHMAKER_TOO_MANY_TAGS',
      ],
      ['tag name of 129 bytes', { game_mode: 'default', tags: { ['n'.repeat(129)]: 'v' } }, 'MATCHMAKER_TAG_NAME_TOO_LONG'],
      ['tag value of 513 bytes', { game_mode: 'default', tags: { k: 'v'.repeat(513) } }, 'MATCHMAKER_TAG_TOO_LONG'],
      ['tag value counted in bytes', { game_mode: 'default', tags: { k: 'é'.repeat(257) } }, 'MATCHMAKER_TAG_TOO_LONG'],
      ['tag value not a string', { game_mode: 'default', tags: { k: 1 } }, 'API_BAD_BODY'],
      ['max_players 0', { game_mode: 'default', max_players: 0 }, 'MATCHMAKER_DYNAMIC_MAX_PLAYERS_INVALID'],
      ['max_players 257', { game_mode: 'default', max_players: 257 }, 'MATCHMAKER_DYNAMIC_MAX_PLAYERS_INVALID'],
      ['max_players 1.5', { game_mode: 'default', max_players: 1.5 }, 'API_BAD_BODY'],
      ['captcha without client_response', { game_mode: 'default', captcha: { hcaptcha: {} } }, 'API_BAD_BODY'],
      ['a JSON array body', [1, 2], 'API_BAD_BODY'],
    ];
    it.each(cases)('%s → 400 %s', async (_name, body, code) => {
      expectErrorShape(await create(body), 400, code);
    });

    it('an unknown game mode or region: the message names those that exist', async () => {
      const mode = expectErrorShape(await create({ game_mode: 'solo' }), 400, 'MATCHMAKER_GAME_MODE_NOT_FOUND');
      expect(mode.message).toBe('Game mode "solo" not found; this namespace has default, duos and squads.');
      const region = expectErrorShape(await create({ game_mode: 'default', region: 'mars' }), 400, 'MATCHMAKER_REGION_NOT_FOUND');
      expect(region.message).toBe('Region "mars" not found; this namespace has lnd-atl (Atlanta), lnd-fra (Frankfurt) and lnd-sgp (Singapore).');
    });

    it('a long list names ten and counts the rest; a single one left is named, never "1 more"', async () => {
      const modes = (n: number) => Array.from({ length: n }, (_, i) => `mode-${i + 1}`);
      const many = await startTestEmulator({ gameModes: modes(12), regions: [{ id: 'lnd-atl', name: 'Atlanta' }] });
      const eleven = await startTestEmulator({ gameModes: modes(11) });
      try {
        const call = (on: TestEmulator, body: unknown) => on.call('POST', '/matchmaker/lobbies/create', { token: on.tokens.public, body });
        expect(expectErrorShape(await call(many, { game_mode: 'solo' }), 400, 'MATCHMAKER_GAME_MODE_NOT_FOUND').message).toBe(
          'Game mode "solo" not found; this namespace has mode-1, mode-2, mode-3, mode-4, mode-5, mode-6, mode-7, mode-8, mode-9, mode-10 and 2 more.',
        );
        expect(expectErrorShape(await call(eleven, { game_mode: 'solo' }), 400, 'MATCHMAKER_GAME_MODE_NOT_FOUND').message).toMatch(/mode-10 and mode-11\.$/);
        expect(expectErrorShape(await call(many, { game_mode: 'mode-1', region: 'x' }), 400, 'MATCHMAKER_REGION_NOT_FOUND').message).toBe(
          'Region "x" not found; this namespace has lnd-atl (Atlanta).',
        );
      } finally {
        await many.stop();
        await eleven.stop();
      }
    });

    it('accepts 8 tags at the length limits and max_players 1 and 256', async () => {
      const tags = Object.fromEntries([...Array(8).keys()].map((i) => [`${i}`.padEnd(128, 'n'), 'v'.repeat(512)]));
      expect((await create({ game_mode: 'default', tags, max_players: 1 })).status).toBe(200);
      expect((await create({ game_mode: 'default', max_players: 256 })).status).toBe(200);
    });

    it('400 API_BAD_BODY for malformed JSON', async () => {
      const res = await create('{"game_mode": ');
      const body = expectErrorShape(res, 400, 'API_BAD_BODY');
      expect(body.message).toMatch(/malformed JSON/);
    });

    it('400 API_BAD_BODY for a body over 1 MiB', async () => {
      const res = await create({ game_mode: 'default', lobby_config: 'x'.repeat(1024 * 1024) });
      expect(expectErrorShape(res, 400, 'API_BAD_BODY').message).toMatch(/1048576/);
    });

    it('400 API_BAD_BODY for a chunked body (no Content-Length)', async () => {
      const encoder = new TextEncoder();
      const stream = new ReadableStream({
        start(controller) {
          controller.enqueue(encoder.encode('{"game_mode":"default"}'));
          controller.close();
        },
      });
      const res = await fetch(`${t.endpoint}/matchmaker/lobbies/create`, {
        method: 'POST',
        body: stream,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${t.tokens.public}` },
        duplex: 'half',
      } as RequestInit);
      const json = (await res.json()) as { code: string; message: string };
      expect(res.status).toBe(400);
      expect(json.code).toBe('API_BAD_BODY');
      expect(json.message).toMatch(/Content-Length/);
    });
  });
});

describe('a namespace without tokenless auth', () => {
  it('refuses lobby create without a token (401) but takes the public token', async () => {
    const strict = await startTestEmulator({ tokenless: false });
    try {
      const body = { game_mode: 'default' };
      expectErrorShape(await strict.call('POST', '/matchmaker/lobbies/create', { body }), 401, 'API_UNAUTHORIZED');
      const ok = await strict.call('POST', '/matchmaker/lobbies/create', { body, token: strict.tokens.public });
      expect(ok.status).toBe(200);
    } finally {
      await strict.stop();
    }
  });
});
