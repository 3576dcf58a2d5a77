// Several emulator instances, in one process and in many, over one data directory.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GAME_ID, NAMESPACE_ID, listBuilds, startEmulator, stopLobby } from '../../src/emulator/index.js';
import { callAt, expectErrorShape, startTestEmulator, tempDir, type TestEmulator } from './helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');

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
    expect(b.endpoint).not.toBe(a.emu.endpoint);
    expect(b.tokens).toEqual(a.emu.tokens);
    expect(a.emu.gameId).toBe(GAME_ID);
    expect(b.namespaceId).toBe(NAMESPACE_ID);
  });

  it('a lobby created on one is read, counted and stopped on the other', async () => {
    const created = await a.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: 'squads' } });
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
      token: a.emu.tokens.cloud,
    });
    expect(after.json.lobby.status.stopped.exit_code).toBe(2);
  });

  it('a build created on one is uploaded through the other', async () => {
    const created = await a.call('POST', `/cloud/games/${GAME_ID}/builds`, {
      token: a.emu.tokens.cloud,
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
    const [build] = listBuilds(a.dataDir);
    expect(build).toMatchObject({ build_id: created.json.build_id, complete: true, content_length: 4 });
  });

  it('the store helpers work without HTTP', async () => {
    const created = await a.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: 'default' } });
    const summary = stopLobby(a.dataDir, created.json.lobby.lobby_id, { exitCode: 0 }) as any;
    expect(summary.lobby.status.stopped).toMatchObject({ exit_code: 0, failed: false });
    expect(stopLobby(a.dataDir, '12345678-1234-4234-8234-123456789abc')).toBeNull();
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

  it('close() ends keep-alive connections and is idempotent', async () => {
    const dir = tempDir();
    const emu = await startEmulator({ dataDir: dir, port: 0 });
    await fetch(`${emu.endpoint}/_emulator/health`);
    const closing = Promise.all([emu.close(), emu.close()]);
    await expect(closing).resolves.toBeDefined();
    await expect(fetch(`${emu.endpoint}/_emulator/health`)).rejects.toThrow();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses an invalid config', async () => {
    const dir = tempDir();
    await expect(startEmulator({ dataDir: dir, config: { gameModes: [] } })).rejects.toThrow(/gameModes/);
    rmSync(dir, { recursive: true, force: true });
  });
});

/** Compiles src/emulator to plain ESM in a temp directory so child processes can run it without a loader. */
function compileEmulator(): string {
  const out = tempDir('gamehost-emu-js-');
  const dest = join(out, 'emulator');
  mkdirSync(dest);
  const srcDir = join(ROOT, 'src/emulator');
  // The emulator's files, and the one module outside it they import (the CLI's error classes).
  const sources = [...readdirSync(srcDir).filter((n) => n.endsWith('.ts')).map((n) => [join(srcDir, n), join(dest, n)]), [join(ROOT, 'src/errors.ts'), join(out, 'errors.ts')]];
  for (const [from, to] of sources) {
    const { outputText } = ts.transpileModule(readFileSync(from!, 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
    });
    writeFileSync(to!.replace(/\.ts$/, '.js'), outputText);
  }
  writeFileSync(join(out, 'package.json'), '{"type":"module"}');
  symlinkSync(join(ROOT, 'node_modules'), join(out, 'node_modules'), 'dir');
  writeFileSync(
    join(out, 'child.js'),
    `import { startEmulator } from './emulator/index.js';
const [dataDir, count] = process.argv.slice(2);
const emu = await startEmulator({ dataDir, config: { startDelayMs: 0, readyDelayMs: 0 } });
const statuses = await Promise.all(Array.from({ length: Number(count) }, () =>
  fetch(emu.endpoint + '/matchmaker/lobbies/create', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer ' + emu.tokens.public },
    body: JSON.stringify({ game_mode: 'duos' }),
  }).then((r) => r.status)));
await emu.close();
process.stdout.write(JSON.stringify({ statuses, cloud: emu.tokens.cloud }));
`,
  );
  return out;
}

function runChild(dir: string, dataDir: string, count: number): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [join(dir, 'child.js'), dataDir, String(count)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => done({ code, out, err }));
  });
}

describe('many processes on one fresh data directory', () => {
  it('50 processes start at once and all their lobby creates succeed', { timeout: 120_000 }, async () => {
    const jsDir = compileEmulator();
    const dataDir = join(tempDir(), 'shared'); // not created yet: the processes race to create it
    try {
      const PROCS = 50;
      const EACH = 10;
      const results = await Promise.all(Array.from({ length: PROCS }, () => runChild(jsDir, dataDir, EACH)));
      for (const r of results) {
        expect(r.err).toBe('');
        expect(r.code).toBe(0);
        expect(JSON.parse(r.out).statuses).toEqual(Array(EACH).fill(200));
      }
      // One secret won the race: every process printed the same token.
      expect(new Set(results.map((r) => JSON.parse(r.out).cloud)).size).toBe(1);
      const t = await startEmulator({ dataDir });
      try {
        const stats = await callAt(t.endpoint, 'GET', '/matchmaker/players/statistics', { token: t.tokens.public });
        expect(stats.json.player_count).toBe(PROCS * EACH);
        expect(stats.json.game_modes.duos.regions['lnd-atl'].player_count).toBe(PROCS * EACH);
      } finally {
        await t.close();
      }
    } finally {
      rmSync(jsDir, { recursive: true, force: true });
      rmSync(resolve(dataDir, '..'), { recursive: true, force: true });
    }
  });
});
