// Bodies a hostile client sends, on both engines: the same input gets the same answer on SQLite and PostgreSQL,
// and never a 500. JSON nested 10,000 deep overflowed the stack when it was written back (500 on both); a NUL
// character was kept by SQLite and refused by PostgreSQL's text (500 there only).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../src/emulator/routes/request.js';
import { createTestDatabase, PG_PRESENT } from '../helpers/postgres.js';
import { expectErrorShape, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';

/** JSON text of `depth` arrays one in the other (as text: JSON.stringify would overflow the test's own stack). */
const nested = (depth: number): string => `${'['.repeat(depth)}1${']'.repeat(depth)}`;
let tags = 0;

const engines = [
  { engine: 'SQLite', database: async () => undefined, skip: false },
  { engine: 'PostgreSQL', database: createTestDatabase, skip: !PG_PRESENT },
];

describe.each(engines)('hostile bodies on $engine', ({ database, skip }) => {
  let t: TestEmulator;
  beforeAll(async () => {
    if (skip) return;
    t = await startTestEmulator({ startDelayMs: 0, readyDelayMs: 0 }, { database: await database() });
  });
  afterAll(() => t?.stop());

  const createLobby = (body: unknown) => t.call('POST', '/matchmaker/lobbies/create', { token: t.tokens.public, body });
  const createBuild = (fields: Record<string, unknown>, file: Record<string, unknown> = {}) =>
    t.call('POST', `/cloud/games/${t.gameId}/builds`, {
      token: t.tokens.cloud,
      body: { display_name: 'CI', image_tag: `game:v${++tags}`, ...fields, image_file: { path: 'server.tar', content_length: 10, ...file } },
    });

  it.skipIf(skip)('a lobby_config 10,000 arrays deep (a 20 KB body) is API_BAD_BODY; as deep as allowed is kept', async () => {
    const deep = await createLobby(`{"game_mode":"default","lobby_config":{"deep":${nested(10_000)}}}`);
    expect(expectErrorShape(deep, 400, 'API_BAD_BODY').message).toContain(`more than ${MAX_JSON_DEPTH} levels deep`);
    // The body itself, the lobby_config object and its field: MAX_JSON_DEPTH in all.
    const deepest = await createLobby(`{"game_mode":"default","lobby_config":{"deep":${nested(MAX_JSON_DEPTH - 2)}}}`);
    expect(deepest.status).toBe(200);
    expectErrorShape(await createLobby(`{"game_mode":"default","lobby_config":{"deep":${nested(MAX_JSON_DEPTH - 1)}}}`), 400, 'API_BAD_BODY');
    // Any body: a game's create too.
    expectErrorShape(await t.call('POST', '/_emulator/games', { body: `{"name":"x","extra":${nested(100)}}` }), 400, 'API_BAD_BODY');
  });

  it.skipIf(skip)('a NUL character in any text kept is API_BAD_BODY, not a 500', async () => {
    const answers = [
      await createBuild({ display_name: 'CI\u0000' }),
      await createBuild({}, { path: 'server\u0000.tar' }),
      await createBuild({}, { content_type: 'application/x-tar\u0000' }),
      await t.call('POST', '/_emulator/games', { body: { name: 'job\u0000' } }),
      await createLobby({ game_mode: 'default', tags: { map: 'dust\u0000' } }),
      await createLobby({ game_mode: 'default', tags: { 'm\u0000': 'dust' } }),
      await createLobby({ game_mode: 'default', lobby_config: { motd: 'hi\u0000' } }),
    ];
    for (const answer of answers) expect(expectErrorShape(answer, 400, 'API_BAD_BODY').message).toContain('NUL character');
    // The same text without it is fine.
    const fine = await createBuild({ display_name: 'CI' });
    expect(fine.status, fine.text).toBe(200);
    expect((await t.call('POST', '/_emulator/games', { body: { name: 'job' } })).status).toBe(200);
  });
});
