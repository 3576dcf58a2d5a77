// GET /_emulator/health: 200 only while the store and the bytes both answer; 503 naming the one that does not, within
// the store's bound. And the requests themselves: a stalled database or bucket (a proxy in front of it that stops
// forwarding, as SIGSTOP on the server would) answers 503 STORE_UNAVAILABLE naming it within the bound, never holds
// them; an unwritable data directory is named as such, at start (one line) and while serving (503). Their answers
// say why in words and a code, never a path, a database's name or address, or a bucket's: those go to the operator's
// log alone (serve's stderr).
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataDirError } from '../../src/emulator/datadir.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { createTestDatabase, PG_PRESENT, queryDatabase } from '../helpers/postgres.js';
import { BUCKET, bucketAt, startS3rver, type S3Server } from '../helpers/s3.js';
import { stallProxy, type StallProxy } from '../helpers/stall-proxy.js';
import { callAt, expectErrorShape } from '../helpers/emulator.js';
import { tempDir } from '../helpers/cli.js';

// Well above what a store takes on a loaded machine (the bucket's start-up check is bound by it too), well below
// the test's own timeout.
const BOUND_MS = 2_000;
const config = { startDelayMs: 0, readyDelayMs: 0, storeTimeoutMs: BOUND_MS };

// The stalls below last until the test resumes the proxy, after the answers: an answer at all is the bound at work
// (without it the requests wait for ever, and the test times out).
const timed = (emu: RunningEmulator, method: string, path: string, opts: Parameters<typeof callAt>[3] = {}) => callAt(emu.endpoint, method, path, opts);

describe('the health check', () => {
  it('local files gone: 503 naming the data directory (there is no bucket), the store still fine; the path told the operator alone', async () => {
    const dir = tempDir();
    const told: string[] = [];
    const emu = await startEmulator({ dataDir: dir, operatorLog: (line) => told.push(line) });
    try {
      expect((await callAt(emu.endpoint, 'GET', '/_emulator/health')).status).toBe(200);
      rmSync(join(dir, 'builds'), { recursive: true });
      const sick = await callAt(emu.endpoint, 'GET', '/_emulator/health');
      expect(sick.status).toBe(503);
      expect(sick.json).toMatchObject({ ok: false, unavailable: 'data directory' });
      expect(sick.json.message).toBe('the data directory does not answer: ENOENT: no such file or directory');
      expect(told).toEqual([expect.stringMatching(/^the data directory does not answer: ENOENT: .*builds/)]);
      expect(told[0]).toContain(dir);
      // Told once, not at every probe.
      expect((await callAt(emu.endpoint, 'GET', '/_emulator/health')).status).toBe(503);
      expect(told).toHaveLength(1);
    } finally {
      await emu.close();
    }
  });

  it.skipIf(!PG_PRESENT)('its database dropped: 503 naming the database, and the replica goes on answering', async () => {
    const url = await createTestDatabase();
    const told: string[] = [];
    const emu = await startEmulator({ dataDir: tempDir(), database: url, operatorLog: (line) => told.push(line) });
    try {
      expect(emu.stores.records.kind).toBe('postgres');
      expect((await callAt(emu.endpoint, 'GET', '/_emulator/health')).status).toBe(200);
      const name = new URL(url).pathname.slice(1);
      const admin = new URL(url);
      admin.pathname = '/postgres';
      await queryDatabase(admin.toString(), `DROP DATABASE ${name} WITH (FORCE)`);
      const sick = await callAt(emu.endpoint, 'GET', '/_emulator/health');
      expect(sick.status).toBe(503);
      expect(sick.json).toMatchObject({ ok: false, unavailable: 'database' });
      expect(sick.json.message).toMatch(/^the database does not answer: /);
      // A request that needs the store is told the database does not answer, and the replica keeps serving.
      const create = await callAt(emu.endpoint, 'POST', '/matchmaker/lobbies/create', { body: { game_mode: 'default' } });
      expect(expectErrorShape(create, 503, 'STORE_UNAVAILABLE').message).toContain('The database does not answer');
      expect((await callAt(emu.endpoint, 'GET', '/_emulator/health')).status).toBe(503);
      // Neither the database's name nor its address is in an answer; the operator's log has the whole error.
      for (const text of [sick.json.message, create.json.message]) {
        expect(text).not.toContain(name);
        expect(text).not.toContain(new URL(url).port);
      }
      expect(told.length).toBeGreaterThan(0);
      expect(told.every((line) => line.startsWith('the database does not answer: '))).toBe(true);
    } finally {
      await emu.close();
    }
  });
});

describe.skipIf(!PG_PRESENT)('a stalled database', () => {
  let proxy: StallProxy;
  let emu: RunningEmulator;
  beforeAll(async () => {
    const url = new URL(await createTestDatabase());
    proxy = await stallProxy(url.hostname, Number(url.port));
    url.hostname = proxy.host;
    url.port = String(proxy.port);
    emu = await startEmulator({ dataDir: tempDir(), database: url.toString(), secret: 'a-test-secret-for-emulators-on-postgresql', config });
  });
  afterAll(async () => {
    proxy.resume();
    await emu?.close();
    await proxy?.close();
  });

  it('requests in flight and new ones answer 503 naming the database within the bound; health too; then it recovers', async () => {
    const stats = () => timed(emu, 'GET', '/matchmaker/players/statistics', { token: emu.tokens.public });
    expect((await stats()).status).toBe(200);
    proxy.stall();
    const [create, statistics, health] = await Promise.all([
      timed(emu, 'POST', '/matchmaker/lobbies/create', { body: { game_mode: 'default' } }),
      stats(),
      timed(emu, 'GET', '/_emulator/health'),
    ]);
    for (const answer of [create, statistics]) {
      expect(expectErrorShape(answer, 503, 'STORE_UNAVAILABLE').message).toContain('The database does not answer');
      expect(answer.json.metadata).toEqual({ unavailable: 'database' });
      expect(answer.headers.get('retry-after')).toBe('1');
    }
    expect(health.status).toBe(503);
    expect(health.json).toMatchObject({ ok: false, unavailable: 'database' });
    proxy.resume();
    let answer = await stats();
    // Connections the stall broke are dropped; a fresh one answers.
    for (let i = 0; i < 10 && answer.status !== 200; i++) answer = await stats();
    expect(answer.status).toBe(200);
    expect((await callAt(emu.endpoint, 'GET', '/_emulator/health')).status).toBe(200);
  });
});

describe('a stalled bucket', () => {
  let s3: S3Server;
  let proxy: StallProxy;
  let emu: RunningEmulator;
  beforeAll(async () => {
    s3 = await startS3rver();
    const target = new URL(s3.endpoint);
    proxy = await stallProxy(target.hostname, Number(target.port));
    emu = await startEmulator({ dataDir: tempDir(), bucket: bucketAt(`http://${proxy.host}:${proxy.port}`), config: { ...config, partSize: 5 * 1024 * 1024 } });
  });
  afterAll(async () => {
    proxy?.resume();
    await emu?.close();
    await proxy?.close();
    await s3?.close();
  });

  it('build create, export and health answer 503 naming the bucket within the bound', async () => {
    const game = `/cloud/games/${emu.gameId}`;
    proxy.stall();
    const [build, exported, health] = await Promise.all([
      timed(emu, 'POST', `${game}/builds`, {
        token: emu.tokens.cloud,
        body: { display_name: 'CI', image_tag: 'game:v1', image_file: { path: 'server.tar', content_length: 10 * 1024 * 1024 } },
      }),
      timed(emu, 'POST', `${game}/matchmaker/lobbies/export-history`, { token: emu.tokens.cloud, body: { query_start: 0, query_end: Date.now() } }),
      timed(emu, 'GET', '/_emulator/health'),
    ]);
    for (const answer of [build, exported]) {
      expect(expectErrorShape(answer, 503, 'STORE_UNAVAILABLE').message).toContain('The bucket does not answer');
    }
    expect(health.status).toBe(503);
    expect(health.json).toMatchObject({ ok: false, unavailable: 'bucket' });
    // The bucket's name and its keys are the operator's to read, not the answer's.
    for (const answer of [build, exported, health]) {
      expect(answer.json.message).not.toContain(BUCKET);
      expect(answer.json.message).not.toContain(String(proxy.port));
    }
    proxy.resume();
    expect((await callAt(emu.endpoint, 'GET', '/_emulator/health')).status).toBe(200);
  });
});

describe('a SQLite store locked by another process', () => {
  it('a write waits the bound for the lock, then answers 503 naming the data directory; reads go on', async () => {
    const dir = tempDir();
    // SQLite waits for a lock synchronously: a short bound keeps the test's own process free.
    const emu = await startEmulator({ dataDir: dir, config: { ...config, storeTimeoutMs: 300 } });
    // Another process (here a connection of the test's own) holds the write lock and does not let go.
    const other = new Database(join(dir, 'emulator.db'));
    try {
      other.exec('BEGIN IMMEDIATE');
      const create = await callAt(emu.endpoint, 'POST', '/matchmaker/lobbies/create', { body: { game_mode: 'default' } });
      expect(expectErrorShape(create, 503, 'STORE_UNAVAILABLE').message).toMatch(/^The data directory does not answer \(.*SQLITE_BUSY/);
      expect((await callAt(emu.endpoint, 'GET', '/matchmaker/players/statistics', { token: emu.tokens.public })).status).toBe(200);
      other.exec('ROLLBACK');
      expect((await callAt(emu.endpoint, 'POST', '/matchmaker/lobbies/create', { body: { game_mode: 'default' } })).status).toBe(200);
    } finally {
      other.close();
      await emu.close();
    }
  });
});

describe('a data directory the emulator cannot write', () => {
  it('at start: one line naming the directory and what it needs', async () => {
    const file = join(tempDir(), 'not-a-directory');
    writeFileSync(file, 'x');
    const err = await startEmulator({ dataDir: file }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DataDirError);
    expect((err as Error).message).toMatch(new RegExp(`^the data directory ${file} must be a directory this user can read and write \\(`));
    expect((err as Error).message).not.toContain('\n');
  });

  it('while serving: a part PUT answers 503 naming the data directory, and health names it, not a bucket', async () => {
    const dir = tempDir();
    const told: string[] = [];
    const emu = await startEmulator({ dataDir: dir, config, operatorLog: (line) => told.push(line) });
    try {
      const created = await callAt(emu.endpoint, 'POST', `/cloud/games/${emu.gameId}/builds`, {
        token: emu.tokens.cloud,
        body: { display_name: 'CI', image_tag: 'game:v1', image_file: { path: 'server.tar', content_length: 4 } },
      });
      expect(created.status).toBe(200);
      // The uploads directory replaced by a file: nothing can be written there (root or not).
      rmSync(join(dir, 'uploads'), { recursive: true });
      writeFileSync(join(dir, 'uploads'), '');
      const put = await fetch(created.json.image_presigned_requests[0].url, { method: 'PUT', body: Buffer.from('abcd') });
      const body = (await put.json()) as { code: string; message: string };
      expect(put.status).toBe(503);
      expect(body.code).toBe('STORE_UNAVAILABLE');
      expect(body.message).toMatch(/^The data directory does not answer \(E[A-Z]+: [a-z ]+; the emulator must be able to read and write there\)/);
      expect(body.message).not.toContain(dir);
      expect(told).toEqual([expect.stringMatching(/^the data directory does not answer: E[A-Z]+: .*uploads/)]);
      const health = await callAt(emu.endpoint, 'GET', '/_emulator/health');
      expect(health.json).toMatchObject({ ok: false, unavailable: 'data directory' });
    } finally {
      await emu.close();
    }
  });

  it.skipIf(process.getuid?.() === 0)('read-only: the emulator does not start, and says which directory', async () => {
    const dir = join(tempDir(), 'data');
    mkdirSync(dir);
    chmodSync(dir, 0o500);
    try {
      await expect(startEmulator({ dataDir: dir })).rejects.toThrow(`the data directory ${dir} must be a directory this user can read and write`);
    } finally {
      chmodSync(dir, 0o700);
    }
  });
});
