// The one emulator starter of the tests (in this process, on a fresh data directory), a small HTTP helper for its
// routes, and what tests do beside the CLI (admin calls, --endpoint runs).
import { readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { dataDirPaths } from '../../src/emulator/datadir.js';
import { LocalBlobStore } from '../../src/emulator/stores/local-blobs.js';
import { startEmulator, type EmulatorConfig, type RunningEmulator, type StartEmulatorOptions } from '../../src/emulator/index.js';
import { ERRORS } from '../../src/emulator/errors.js';
import { afterAll, beforeAll } from 'vitest';
import { isolatedEnv, tempDir } from './cli.js';

export interface Call {
  status: number;
  headers: Headers;
  json: any;
  text: string;
}

export interface CallOptions {
  token?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface TestEmulator extends RunningEmulator {
  dataDir: string;
  /** The signing secret: read from the data directory, or on PostgreSQL (where it lives in the database) given. */
  secret: Buffer;
  /** One request to this emulator (a path, or a whole URL such as a presigned one). */
  call(method: string, path: string, opts?: CallOptions): Promise<Call>;
  /** close(), then the data directory removed at once (not when the file ends). */
  stop(): Promise<void>;
}

/** One request to `endpoint`; its answer with the body read (as JSON when it is JSON). */
export async function callAt(endpoint: string, method: string, path: string, opts: CallOptions = {}): Promise<Call> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.body !== undefined) {
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const url = path.startsWith('http') ? path : endpoint + path;
  const res = await fetch(url, { method, headers, body });
  const text = await res.text();
  let json: unknown = undefined;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}

/**
 * An emulator in this process on a fresh data directory (or `options.dataDir`; its records in `options.database`
 * when given), on the wall clock unless given `options.clock`, its admin routes open unless given
 * `options.adminToken`. Lobbies start and become ready at once and the per-IP limits are off (every test's requests
 * come from loopback), unless `config` says otherwise.
 */
export type TestEmulatorOptions = Omit<StartEmulatorOptions, 'config' | 'dataDir'> & { dataDir?: string };

export async function startTestEmulator(config: Partial<EmulatorConfig> = {}, options: TestEmulatorOptions = {}): Promise<TestEmulator> {
  const dataDir = options.dataDir ?? tempDir('gamehost-emu-');
  // On PostgreSQL the secret lives in the database: given here instead, so the test knows it.
  const secret = options.secret ?? (options.database === undefined ? undefined : 'a-test-secret-for-emulators-on-postgresql');
  const emu = await startEmulator({ ...options, dataDir, secret, config: { startDelayMs: 0, readyDelayMs: 0, rateLimits: false, ...config } });
  return Object.assign(emu, {
    dataDir,
    secret: secret === undefined ? readFileSync(join(dataDir, 'secret')) : Buffer.from(secret),
    call: (method: string, path: string, opts?: CallOptions) => callAt(emu.endpoint, method, path, opts),
    async stop() {
      await emu.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  });
}

export async function stopLobby(endpoint: string, lobbyId: string, body: { exit_code?: number; failed?: boolean } = {}): Promise<void> {
  const res = await fetch(`${endpoint}/_emulator/lobbies/${lobbyId}/stop`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`stop failed: ${res.status} ${await res.text()}`);
}

export interface EmulatorBuild {
  build_id: string;
  image_tag: string;
  content_length: number;
  sha256: string | null;
  complete: boolean;
}

/**
 * What the schema's steps after version 22 added, undone (the same SQL on SQLite and PostgreSQL): a test that winds a
 * store made by this tree back to an older version runs it too, as that version had none of it (a step adding a
 * column cannot be run again: SQLite has no ADD COLUMN IF NOT EXISTS).
 */
export const SINCE_22 = 'ALTER TABLE upload_parts DROP COLUMN stamp;';

/** The seeded game's builds (`adminToken` for an emulator that has one). */
export async function listBuilds(endpoint: string, adminToken?: string): Promise<EmulatorBuild[]> {
  const res = await fetch(`${endpoint}/_emulator/builds`, { headers: adminToken ? { authorization: `Bearer ${adminToken}` } : {} });
  return ((await res.json()) as { builds: EmulatorBuild[] }).builds;
}

/** The environment that points the CLI at a running emulator, as a CI job would. */
export function endpointEnv(emu: RunningEmulator): Record<string, string> {
  return {
    GAMEHOST_ENDPOINT: emu.endpoint,
    GAMEHOST_TOKEN: emu.tokens.cloud,
    GAMEHOST_NAMESPACE_TOKEN: emu.tokens.public,
    GAMEHOST_GAME: emu.gameId,
    GAMEHOST_NAMESPACE: emu.namespaceId,
  };
}

export interface EmulatorFixture {
  emu: TestEmulator;
  /** An isolated environment pointing the CLI at `emu`, as a CI job would. */
  env: Record<string, string | undefined>;
}

/** An emulator for the enclosing describe block: started before its tests, closed after; fields set in beforeAll. */
export function useEmulator(config: Partial<EmulatorConfig> = {}, options: TestEmulatorOptions = {}): EmulatorFixture {
  const fixture = {} as EmulatorFixture;
  beforeAll(async () => {
    fixture.emu = await startTestEmulator(config, options);
    fixture.env = { ...isolatedEnv(), ...endpointEnv(fixture.emu) };
  });
  afterAll(() => fixture.emu.close());
  return fixture;
}

/**
 * A front for the emulator that answers some requests itself (`intercept` returns true) and passes the rest on:
 * for failures the emulator never produces, such as a rate limit on one call, S3's XML errors or a link that hangs.
 */
export async function frontOf(endpoint: string, intercept: (req: http.IncomingMessage, res: http.ServerResponse) => boolean): Promise<{ endpoint: string; close(): void }> {
  const target = new URL(endpoint);
  const front = http.createServer((req, res) => {
    if (intercept(req, res)) return;
    const up = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers, agent: false }, (r) => {
      res.writeHead(r.statusCode!, r.headers);
      r.pipe(res);
    });
    // The emulator may answer (and close) before it has read the whole body: the answer is what counts.
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  return {
    endpoint: `http://127.0.0.1:${(front.address() as AddressInfo).port}`,
    close: () => {
      front.close();
      front.closeAllConnections();
    },
  };
}

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Asserts the common error body and returns it. */
export function expectErrorShape(call: Call, status: number, code: string): any {
  if (call.status !== status || call.json?.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${call.status} ${call.text}`);
  }
  const body = call.json;
  if (typeof body.message !== 'string' || body.message.length === 0) throw new Error('error without message');
  if (body.ray_id !== call.headers.get('rvt-ray-id')) throw new Error('ray_id differs from the rvt-ray-id header');
  if (!UUID_RE.test(body.ray_id)) throw new Error(`ray_id ${body.ray_id} is not a uuid`);
  // The service's page for its codes; none for the emulator's own (an old-service page would not have them).
  const slug = code.toLowerCase().replace(/_/g, '-');
  const page = code in ERRORS && 'emulatorOnly' in ERRORS[code as keyof typeof ERRORS] ? undefined : `https://rivet.gg/docs/general/errors#${slug}`;
  if (body.documentation !== page) throw new Error(`documentation ${body.documentation}`);
  return body;
}

/**
 * What a game server does for the player a create, find or join answered: with its lobby's token (from the admin
 * environment route, as `emulator lobby env` prints it) it presents the player's token to players/connected.
 * `adminToken`: for an emulator whose admin routes want one.
 */
export async function admit(endpoint: string, seat: { lobby: { lobby_id: string }; player: { token: string } }, adminToken?: string): Promise<void> {
  const env = await callAt(endpoint, 'GET', `/_emulator/lobbies/${seat.lobby.lobby_id}/env`, { token: adminToken });
  if (env.status !== 200) throw new Error(`env: ${env.status} ${env.text}`);
  const res = await callAt(endpoint, 'POST', '/matchmaker/players/connected', { token: env.json.env.RIVET_TOKEN, body: { player_token: seat.player.token } });
  if (res.status !== 200) throw new Error(`connected: ${res.status} ${res.text}`);
}

/**
 * A build's bytes in a running emulator's data directory, as it reads them to run it (one file, or its parts in
 * order, as many bytes as its record says).
 */
export async function storedBuild(emu: Pick<TestEmulator, 'dataDir' | 'endpoint'>, buildId: string): Promise<Buffer> {
  const build = (await listBuilds(emu.endpoint)).find((b) => b.build_id === buildId);
  if (build === undefined) throw new Error(`the emulator lists no build ${buildId}`);
  return buffer(await new LocalBlobStore(dataDirPaths(emu.dataDir), Buffer.alloc(32), undefined as never).readBuild(build));
}
