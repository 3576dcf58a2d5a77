// Request targets that are not a plain path, sent as raw request lines over a socket (an HTTP client would clean
// them up first): against an emulator with an admin token, each is refused or answered without admin effect. The
// admin guard once looked at the path's prefix and the router at its segments, so `*/_emulator/games` reached the
// admin routes with no token at all.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorShape, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';

const ADMIN = 'request-target-admin-token-0123456789abcdef';

/** Sends one raw request (its request line as given) and answers the status code and the body. */
async function raw(endpoint: string, method: string, target: string, body = ''): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(endpoint);
  const socket = connect(Number(port), hostname);
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.write(
    `${method} ${target} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nConnection: close\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  await new Promise<void>((resolve, reject) => {
    socket.on('close', () => resolve());
    socket.on('error', reject);
  });
  const text = Buffer.concat(chunks).toString('utf8');
  const status = /^HTTP\/1\.1 (\d{3})/.exec(text);
  if (!status) throw new Error(`no HTTP answer to ${method} ${target}: ${JSON.stringify(text)}`);
  return { status: Number(status[1]), body: text.slice(text.indexOf('\r\n\r\n') + 4) };
}

/** Every spelling of `path` (an admin route's path, starting `/_emulator/`) that is not the path itself. */
function spellings(endpoint: string, path: string): string[] {
  const rest = path.slice('/_emulator/'.length);
  return [
    '*',
    `*${path}`,
    `**${path}`,
    `*a${path}`,
    `*%${path}`,
    `${endpoint}${path}`,
    `http://example.com${path}`,
    `/${path}`,
    `/.${path}`,
    `/%5F_emulator/${rest}`,
    `/_emulator/../_emulator/${rest}`,
    `/_emulator/./${rest}`,
    `/_Emulator/${rest}`,
  ];
}

describe('request targets that are not a plain path', () => {
  let t: TestEmulator;
  let victim: { game_id: string };
  let lobbyId: string;
  beforeAll(async () => {
    t = await startTestEmulator({ startDelayMs: 0, readyDelayMs: 0 }, { adminToken: ADMIN });
    const made = await t.call('POST', '/_emulator/games', { token: ADMIN, body: { name: 'victim' } });
    expect(made.status).toBe(200);
    victim = made.json;
    const lobby = await t.call('POST', '/matchmaker/lobbies/create', { token: t.tokens.public, body: { game_mode: 'default' } });
    expect(lobby.status).toBe(200);
    lobbyId = lobby.json.lobby.lobby_id;
  });
  afterAll(() => t.stop());

  // The seeded game (no name) and the victim: nothing made, nothing deleted.
  const gameNames = async () => ((await t.call('GET', '/_emulator/games', { token: ADMIN })).json.games as { name: string }[]).map((g) => g.name);

  it('list, create, delete and stop through every spelling: refused, and nothing changed', async () => {
    const requests: [string, string, string][] = [
      ['GET', '/_emulator/games', ''],
      ['POST', '/_emulator/games', '{"name":"intruder"}'],
      ['DELETE', `/_emulator/games/${victim.game_id}`, ''],
      ['POST', `/_emulator/lobbies/${lobbyId}/stop`, '{}'],
      ['POST', `/_emulator/lobbies/${lobbyId}/players`, '{}'],
      ['GET', '/_emulator/builds', ''],
    ];
    for (const [method, path, body] of requests) {
      for (const target of spellings(t.endpoint, path)) {
        const answer = await raw(t.endpoint, method, target, body);
        // Refused: a 4xx, never the admin route's answer (its tokens, its list, its deletion).
        expect(answer.status, `${method} ${target}: ${answer.body}`).toBeGreaterThanOrEqual(400);
        expect(answer.status, `${method} ${target}: ${answer.body}`).toBeLessThan(500);
        expect(answer.body).not.toContain('"tokens"');
        expect(answer.body).not.toContain('"games"');
      }
    }
    expect(await gameNames()).toEqual(['', 'victim']);
    const lobby = await t.call('GET', `/cloud/games/${t.gameId}/namespaces/${t.namespaceId}/logs/lobbies/${lobbyId}`, { token: t.tokens.cloud });
    expect(lobby.status).toBe(200);
    expect(lobby.json.lobby.status).toHaveProperty('running');
  });

  it('a target that is not origin-form is one JSON error, before any route', async () => {
    for (const target of ['*', '*/_emulator/games', `${t.endpoint}/_emulator/health`, '*/matchmaker/players/statistics']) {
      const answer = await raw(t.endpoint, 'GET', target);
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body)).toMatchObject({ code: 'API_BAD_REQUEST_TARGET' });
    }
  });

  it('an admin path with a wrong method is asked for the token first; the plain path with it works', async () => {
    expectErrorShape(await t.call('PUT', '/_emulator/games'), 401, 'API_UNAUTHORIZED');
    expectErrorShape(await t.call('PUT', '/_emulator/games', { token: ADMIN }), 405, 'API_METHOD_NOT_ALLOWED');
    expect((await raw(t.endpoint, 'GET', '/_emulator/health')).status).toBe(200);
    expect((await raw(t.endpoint, 'GET', '/_emulator/games')).status).toBe(401);
    const made = await raw(t.endpoint, 'POST', '/_emulator/games', '{"name":"x"}');
    expect(made.status).toBe(401);
    expect(await gameNames()).toEqual(['', 'victim']);
  });
});
