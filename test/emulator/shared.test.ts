// Several emulator instances in one process over one data directory (many processes: e2e/emulator-concurrency).
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GAME_ID, NAMESPACE_ID, startEmulator } from '../../src/emulator/index.js';
import { admit, callAt, expectErrorShape, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/cli.js';

describe('two instances on one data directory', () => {
  let a: TestEmulator;
  let b: Awaited<ReturnType<typeof startEmulator>>;
  beforeAll(async () => {
    a = await startTestEmulator({ startDelayMs: 0, readyDelayMs: 0 });
    b = await startEmulator({ dataDir: a.dataDir, config: { startDelayMs: 60_000 } });
  });
  afterAll(async () => {
    await b.close();
    await a.stop();
  });

  it('share the secret, so tokens are the same and valid on both', () => {
    expect(b.endpoint).not.toBe(a.endpoint);
    expect(b.tokens).toEqual(a.tokens);
    expect(a.gameId).toBe(GAME_ID);
    expect(b.namespaceId).toBe(NAMESPACE_ID);
  });

  it('a lobby created on one is read, counted and stopped on the other', async () => {
    const created = await a.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: 'squads' } });
    // Admitted through the other emulator: a lobby token is good on every process over the store.
    await admit(b.endpoint, created.json);
    const lobbyId = created.json.lobby.lobby_id;
    const logs = await callAt(b.endpoint, 'GET', `/cloud/games/${GAME_ID}/namespaces/${NAMESPACE_ID}/logs/lobbies/${lobbyId}`, {
      token: b.tokens.cloud,
    });
    expect(logs.status).toBe(200);
    // Timings come from the creating instance's config, stored with the lobby.
    expect(logs.json.lobby.start_ts).toBe(logs.json.lobby.create_ts);
    const stats = await callAt(b.endpoint, 'GET', '/matchmaker/players/statistics', { token: b.tokens.public });
    expect(stats.json.game_modes.squads.player_count).toBe(1);
    await callAt(b.endpoint, 'POST', `/_emulator/lobbies/${lobbyId}/stop`, { body: { exit_code: 2 } });
    const after = await a.call('GET', `/cloud/games/${GAME_ID}/namespaces/${NAMESPACE_ID}/logs/lobbies/${lobbyId}`, {
      token: a.tokens.cloud,
    });
    expect(after.json.lobby.status.stopped.exit_code).toBe(2);
  });

  it('a build created on one is uploaded through the other', async () => {
    const created = await a.call('POST', `/cloud/games/${GAME_ID}/builds`, {
      token: a.tokens.cloud,
      body: { display_name: 'Shared', image_tag: 'shared:v1', image_file: { path: 'x.tar', content_length: 4 } },
    });
    const url = new URL(created.json.image_presigned_requests[0].url);
    const put = await fetch(b.endpoint + url.pathname + url.search, { method: 'PUT', body: Buffer.from('abcd') });
    expect(put.status).toBe(200);
    const done = await callAt(b.endpoint, 'POST', `/cloud/uploads/${created.json.upload_id}/complete`, {
      token: b.tokens.cloud,
      body: {},
    });
    expect(done.status).toBe(200);
    const [build] = (await callAt(a.endpoint, 'GET', '/_emulator/builds')).json.builds;
    expect(build).toMatchObject({ build_id: created.json.build_id, complete: true, content_length: 4 });
  });

  it('a lobby stopped through the services of one instance is stopped for the other', async () => {
    const created = await a.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: 'default' } });
    const lobbyId = created.json.lobby.lobby_id;
    expect(await a.services.lobbies.stop(lobbyId, { exitCode: 0 })).not.toBeNull();
    const logs = await callAt(b.endpoint, 'GET', `/cloud/games/${GAME_ID}/namespaces/${NAMESPACE_ID}/logs/lobbies/${lobbyId}`, {
      token: b.tokens.cloud,
    });
    expect(logs.json.lobby.status.stopped).toMatchObject({ exit_code: 0, failed: false });
    expect(await b.services.lobbies.stop('12345678-1234-4234-8234-123456789abc', {})).toBeNull();
  });

  it('tokens survive a restart', async () => {
    const dir = tempDir();
    const first = await startEmulator({ dataDir: dir });
    const tokens = first.tokens;
    await first.close();
    const second = await startEmulator({ dataDir: dir });
    try {
      expect(second.tokens).toEqual(tokens);
      const res = await callAt(second.endpoint, 'GET', '/matchmaker/players/statistics', { token: tokens.public });
      expect(res.status).toBe(200);
    } finally {
      await second.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the data directory is private: dir 0700, secret 0600 with 32 bytes', () => {
    expect(statSync(a.dataDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(a.dataDir, 'secret')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(a.dataDir, 'secret'))).toHaveLength(32);
  });
});

describe('the HTTP front', () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator();
  });
  afterAll(async () => {
    await t.stop();
  });

  it('unknown route → 404, wrong method → 405 with Allow; every response has a ray id', async () => {
    expectErrorShape(await t.call('GET', '/nope'), 404, 'API_NOT_FOUND');
    const wrong = await t.call('GET', '/matchmaker/lobbies/create');
    expectErrorShape(wrong, 405, 'API_METHOD_NOT_ALLOWED');
    expect(wrong.headers.get('allow')).toBe('POST');
    const ok = await t.call('GET', '/_emulator/health');
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ ok: true, game_id: GAME_ID, namespace_id: NAMESPACE_ID });
    expect(ok.headers.get('rvt-ray-id')).toMatch(/^[0-9a-f-]{36}$/);
    const again = await t.call('GET', '/_emulator/health');
    expect(again.headers.get('rvt-ray-id')).not.toBe(ok.headers.get('rvt-ray-id'));
  });

  it('close() ends keep-alive connections, closes the store, and is idempotent', async () => {
    const dir = tempDir();
    const emu = await startEmulator({ dataDir: dir, port: 0 });
    // Leaves a keep-alive connection open, which close() must end rather than wait for.
    await fetch(`${emu.endpoint}/_emulator/health`);
    const first = emu.close();
    expect(emu.close()).toBe(first);
    await expect(first).resolves.toBeUndefined();
    await expect(fetch(`${emu.endpoint}/_emulator/health`)).rejects.toThrow();
    await expect(emu.services.builds.list(GAME_ID)).rejects.toThrow(/database connection is not open/);
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses an invalid config', async () => {
    const dir = tempDir();
    await expect(startEmulator({ dataDir: dir, config: { gameModes: [] } })).rejects.toThrow(/gameModes/);
    rmSync(dir, { recursive: true, force: true });
  });
});
