// Shared set-up for emulator tests: a fresh data directory, a running emulator and a small HTTP helper.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir as sharedTempDir } from '../helpers/cli.js';
import { startEmulator, type Clock, type EmulatorConfig, type RunningEmulator, type StartEmulatorOptions } from '../../src/emulator/index.js';
import type { LogWatchTiming } from '../../src/emulator/services/logs.js';

export interface Call {
  status: number;
  headers: Headers;
  json: any;
  text: string;
}

export interface TestEmulator {
  emu: RunningEmulator;
  dataDir: string;
  secret: Buffer;
  call(method: string, path: string, opts?: { token?: string | null; body?: unknown; headers?: Record<string, string> }): Promise<Call>;
  stop(): Promise<void>;
}

export function tempDir(prefix = 'gamehost-emu-'): string {
  return sharedTempDir(prefix);
}

export async function callAt(
  endpoint: string,
  method: string,
  path: string,
  opts: { token?: string | null; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Call> {
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
 * An emulator on a fresh data directory (or `opts.dataDir`; its records in `opts.database` when given), on the wall clock unless given `opts.clock`, its admin
 * routes open unless given `opts.adminToken`.
 */
export async function startTestEmulator(
  config: Partial<EmulatorConfig> = {},
  opts: { dataDir?: string; clock?: Clock; adminToken?: string; database?: string; logWatch?: Partial<LogWatchTiming>; runtime?: StartEmulatorOptions['runtime'] } = {},
): Promise<TestEmulator> {
  const dataDir = opts.dataDir ?? tempDir();
  // On PostgreSQL the secret lives in the database: given here instead, so the test knows it.
  const secret = opts.database === undefined ? undefined : 'a-test-secret-for-emulators-on-postgresql';
  // The per-IP limits are off unless a test turns them on: every test's requests come from loopback.
  const emu = await startEmulator({ dataDir, config: { rateLimits: false, ...config }, clock: opts.clock, adminToken: opts.adminToken, database: opts.database, secret, logWatch: opts.logWatch, runtime: opts.runtime });
  return {
    emu,
    dataDir,
    secret: secret === undefined ? readFileSync(join(dataDir, 'secret')) : Buffer.from(secret),
    call: (method, path, opts) => callAt(emu.endpoint, method, path, opts),
    async stop() {
      await emu.close();
      rmSync(dataDir, { recursive: true, force: true });
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
  const slug = code.toLowerCase().replace(/_/g, '-');
  if (body.documentation !== `https://rivet.gg/docs/general/errors#${slug}`) throw new Error(`documentation ${body.documentation}`);
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
