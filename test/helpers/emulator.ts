// A long-lived emulator for tests that need one beside the CLI (admin calls, --endpoint runs).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startEmulator, type RunningEmulator, type StartEmulatorOptions } from '../../src/emulator/index.js';
import { afterAll, beforeAll } from 'vitest';
import { isolatedEnv, tempDir } from './cli.js';

/** `options`: more of startEmulator's, such as `logWatch` (short log watches for tests). */
export async function startTestEmulator(
  config: Record<string, unknown> = {},
  dataDir = tempDir('gamehost-emu-'),
  options: Omit<StartEmulatorOptions, 'dataDir' | 'config'> = {},
): Promise<RunningEmulator & { dataDir: string }> {
  const emu = await startEmulator({ ...options, dataDir, config: { startDelayMs: 0, readyDelayMs: 0, rateLimits: false, ...config } });
  return Object.assign(emu, { dataDir });
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
  emu: Awaited<ReturnType<typeof startTestEmulator>>;
  /** An isolated environment pointing the CLI at `emu`, as a CI job would. */
  env: Record<string, string | undefined>;
}

/** An emulator for the enclosing describe block: started before its tests, closed after; fields set in beforeAll. */
export function useEmulator(config: Record<string, unknown> = {}, options: Omit<StartEmulatorOptions, 'dataDir' | 'config'> = {}): EmulatorFixture {
  const fixture = {} as EmulatorFixture;
  beforeAll(async () => {
    fixture.emu = await startTestEmulator(config, undefined, options);
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
