// One spelling per token and per signed URL: Node's base64url decoder skips characters outside the alphabet, takes
// padding and ignores the unused bits of the last character, so `!!` appended, a `*` inserted, `==` added or the
// last signature character moved to its neighbour all verified before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signToken, verifyToken } from '../../src/emulator/services/tokens.js';
import { expectErrorShape, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** The same bytes spelt otherwise: the last character's neighbour differs only in bits base64url leaves unused. */
function neighbour(text: string): string {
  const i = ALPHABET.indexOf(text.at(-1)!);
  return text.slice(0, -1) + ALPHABET[i % 4 === 3 ? i - 1 : i + 1];
}

/** Other spellings of a token whose last part (the signature) is base64url. */
function respellings(token: string): string[] {
  const [label, claims, sig] = token.split('.') as [string, string, string];
  return [
    `${token}!!`,
    `${label}.${claims}.${sig.slice(0, 5)}*${sig.slice(5)}`,
    `${token}==`,
    `${label}.${claims}.${neighbour(sig)}`,
    `${label}.${claims}=.${sig}`,
    `${label}.${claims.slice(0, 3)}!${claims.slice(3)}.${sig}`,
  ];
}

describe('tokens have one spelling', () => {
  const secret = Buffer.alloc(32, 9);
  const token = signToken(secret, { kind: 'pub', game_id: 'g', namespace_id: 'n' });

  it('the token verifies; every other spelling of it does not', () => {
    expect(verifyToken(secret, token)).toEqual({ kind: 'pub', game_id: 'g', namespace_id: 'n' });
    for (const spelling of respellings(token)) expect({ spelling, claims: verifyToken(secret, spelling) }).toEqual({ spelling, claims: null });
  });
});

describe('over HTTP', () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ startDelayMs: 0, readyDelayMs: 0 });
  });
  afterAll(() => t.stop());

  it('a respelt cloud or public token is 401', async () => {
    expect((await t.call('GET', '/matchmaker/players/statistics', { token: t.tokens.public })).status).toBe(200);
    for (const spelling of [...respellings(t.tokens.public), ...respellings(t.tokens.cloud)]) {
      const path = spelling.startsWith('cloud') ? `/cloud/games/${t.gameId}` : '/matchmaker/players/statistics';
      expectErrorShape(await t.call('GET', path, { token: spelling }), 401, 'API_UNAUTHORIZED');
    }
  });

  it('a respelt lobby token is 401; a respelt player token is TOKEN_ERROR and connects nobody', async () => {
    const seat = (await t.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: 'default' } })).json;
    const env = await t.call('GET', `/_emulator/lobbies/${seat.lobby.lobby_id}/env`);
    const lobbyToken: string = env.json.env.RIVET_TOKEN;
    for (const spelling of respellings(lobbyToken))
      expectErrorShape(await t.call('PUT', '/matchmaker/lobbies/closed', { token: spelling, body: { is_closed: false } }), 401, 'API_UNAUTHORIZED');
    const player: string = seat.player.token;
    const [label, header, body, sig] = player.split('.') as [string, string, string, string];
    const playerSpellings = [
      `${player}=`,
      `${player}==`,
      `${label}.${header}.${body}.${neighbour(sig)}`,
      `${label}.${header}.${body}=.${sig}`,
      `${label}.${header}=.${body}.${sig}`,
      `${label}.${neighbour(header)}.${body}.${sig}`,
      `${label}.${header}.${neighbour(body)}.${sig}`,
      `${label}.${header}.${body}.${sig.slice(0, 5)}*${sig.slice(5)}`,
    ];
    for (const spelling of playerSpellings) {
      const res = await t.call('POST', '/matchmaker/players/connected', { token: lobbyToken, body: { player_token: spelling } });
      expect({ spelling, code: res.json.code }).toEqual({ spelling, code: 'TOKEN_ERROR' });
    }
    // The token as it was given still connects, once: none of the respellings did.
    expect((await t.call('POST', '/matchmaker/players/connected', { token: lobbyToken, body: { player_token: player } })).status).toBe(200);
  });

  it('a signed URL respelt (its expiry with a leading zero, a parameter twice, its signature changed) is 403', async () => {
    const created = await t.call('POST', `/cloud/games/${t.gameId}/builds`, {
      token: t.tokens.cloud,
      body: { display_name: 'CI', image_tag: 'game:v1', image_file: { path: 'server.tar', content_length: 4 } },
    });
    expect(created.status).toBe(200);
    const url = new URL(created.json.image_presigned_requests[0].url);
    const expires = url.searchParams.get('expires')!;
    const sig = url.searchParams.get('sig')!;
    const base = `${url.origin}${url.pathname}`;
    const put = (query: string) => fetch(`${base}?${query}`, { method: 'PUT', body: Buffer.from('abcd') });
    for (const query of [
      `expires=0${expires}&sig=${sig}`,
      `expires=${expires}&sig=${sig}&sig=${sig}`,
      `expires=${expires}&expires=${expires}&sig=${sig}`,
      `expires=${expires}&sig=${sig}==`,
      `expires=${expires}&sig=${neighbour(sig)}`,
    ]) {
      const res = await put(query);
      expect({ query, status: res.status, code: ((await res.json()) as { code: string }).code }).toEqual({ query, status: 403, code: 'PRESIGN_INVALID' });
    }
    expect((await put(`expires=${expires}&sig=${sig}`)).status).toBe(200);
  });
});
