// Acceptance (issue 30): a lobby's container under `emulator serve --run-build`, tried from inside. Its server (a
// check script, test/fixtures/container-check.mjs) calls every route of the emulator at the address it was given,
// with no token, its lobby token, and the admin token: the lobby routes alone answer, every other route is 401 or
// 403, with or without an admin token configured on serve. The main listener is not reachable from it (on its
// loopback, nor on the gateway); it holds no capability but NET_BIND_SERVICE and cannot gain one; and where this
// machine can compile a static C program, a raw socket (AF_PACKET, and SOCK_RAW ICMP) is tried and refused. Its
// container, as the Engine API inspects it: the emulator's bridge network, CapDrop ALL, no-new-privileges, a
// read-only root, memory and pids limits.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS, networkName, PIDS_LIMIT, type DockerDaemon } from '../../src/emulator/runtime/docker.js';
import { ROUTE_TABLE } from '../../src/emulator/routes/server.js';
import { LOBBY_TIER } from '../../src/emulator/services/environment.js';
import { tempDir } from '../helpers/cli.js';
import { buildAndSaveImage, DOCKER, DOCKER_PRESENT, freePort, removeEmulatorLeftovers } from '../helpers/docker.js';
import { findLobby, logLines, until } from '../helpers/lobby-server.js';
import { runBin } from '../helpers/bin.js';
import { replicaEnv, serve, stopReplica, type Replica } from '../helpers/replica.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const IMAGE = `gamehost-test/isolation:${process.pid}-${Date.now()}`;
const ADMIN_TOKEN = 'a'.repeat(16) + 'isolation-test-admin-token-' + process.pid;

/** A static binary of test/fixtures/raw-socket.c, or undefined where no C compiler makes one. */
function rawSocketProgram(dir: string): string | undefined {
  const out = path.join(dir, 'raw');
  const cc = spawnSync('cc', ['-static', '-O2', '-o', out, path.join(ROOT, 'test/fixtures/raw-socket.c')], { encoding: 'utf8' });
  if (cc.status === 0) return out;
  console.warn(`isolation test: no static C build here (${cc.error?.message ?? cc.stderr.trim().split('\n')[0]}); the raw socket is shown impossible by the capabilities alone`);
  return undefined;
}

describe.skipIf(!DOCKER_PRESENT || process.platform !== 'linux')('a lobby\'s container, tried from inside', { timeout: 180_000 }, () => {
  const docker = DOCKER as DockerDaemon;
  const replicas: Replica[] = [];
  const dataDirs: string[] = [];
  let imageTar = '';
  let raw: string | undefined;

  beforeAll(async () => {
    const build = tempDir();
    raw = rawSocketProgram(build);
    const files: Record<string, string | { from: string }> = {
      'check.mjs': { from: path.join(ROOT, 'test/fixtures/container-check.mjs') },
      'routes.json': JSON.stringify(ROUTE_TABLE),
      'admin-token': ADMIN_TOKEN,
    };
    if (raw) files.raw = { from: raw };
    imageTar = await buildAndSaveImage(build, IMAGE, files, 'check.mjs');
  }, 180_000);

  afterAll(async () => {
    await Promise.all(replicas.map(stopReplica));
    await removeEmulatorLeftovers(dataDirs);
  }, 60_000);

  it.each([
    ['without an admin token', false],
    ['with an admin token', true],
  ])('%s on serve: only the lobby routes answer it, nothing else of the emulator is reachable, it holds no capability to open a raw socket', async (_name, withToken) => {
    const dataDir = tempDir('gamehost-isolation-');
    dataDirs.push(dataDir);
    const mainPort = await freePort();
    const r = await serve(['--run-build', '--data-dir', dataDir, '--port', String(mainPort), '--pass-env', 'MAIN_PORT'], {
      DOCKER_HOST: process.env.DOCKER_HOST,
      MAIN_PORT: String(mainPort),
      ...(withToken ? { GAMEHOST_EMULATOR_ADMIN_TOKEN: ADMIN_TOKEN } : {}),
    });
    replicas.push(r);
    const home = tempDir();
    const pushed = await runBin(['build', 'push', imageTar, '--tag', 'check:v1'], replicaEnv(home, r));
    expect(pushed.code, pushed.stderr).toBe(0);
    const { lobbyId } = await findLobby(r);
    const lines = await until('the check done', async () => {
      const out = await logLines(r, lobbyId, 'std_out');
      return out.includes('done') ? out : undefined;
    }, 120_000);
    expect(await logLines(r, lobbyId, 'std_err')).toEqual([]);

    // Every route, three ways; the lobby routes with its lobby token answer (2xx, or 400 for the empty bodies of
    // players connected and disconnected), every other route is refused whatever the token.
    const answers = lines.filter((l) => l.startsWith('route '));
    expect(answers).toHaveLength(ROUTE_TABLE.length * 3);
    for (const line of answers) {
      const [, method, pattern, token, status] = line.split(' ') as [string, string, string, string, string];
      const lobbyRoute = ROUTE_TABLE.find((t) => t.method === method && t.path === pattern)!.lobby;
      if (lobbyRoute && token === 'lobby') expect([200, 400], line).toContain(Number(status));
      // A lobby route with another token (or none) answers as the service would (GET state is tokenless there).
      else if (lobbyRoute) expect(Number(status), line).toBeLessThan(500);
      else expect([401, 403], line).toContain(Number(status));
    }
    // The main listener, where the admin routes trust loopback when no token is set: not there from inside.
    expect(lines.filter((l) => l.startsWith('main '))).toEqual(['main loopback ECONNREFUSED', 'main gateway ECONNREFUSED']);
    // Capabilities: NET_BIND_SERVICE alone (bit 10), in the bounding set too; NET_RAW (bit 13) nowhere; none to gain.
    expect(lines).toEqual(expect.arrayContaining(['CapEff: 0000000000000400', 'CapBnd: 0000000000000400', 'NoNewPrivs: 1']));
    if (raw) expect(lines).toEqual(expect.arrayContaining(['raw packet Operation not permitted', 'raw icmp Operation not permitted']));

    const [container] = await docker.listContainers([`${LABELS.lobby}=${lobbyId}`], { running: true });
    const inspect = await docker.inspectContainer(container!.Id);
    expect(inspect.HostConfig.NetworkMode).toBe(networkName(dataDir));
    expect(inspect.HostConfig).toMatchObject({
      CapDrop: ['ALL'],
      CapAdd: ['NET_BIND_SERVICE'],
      SecurityOpt: ['no-new-privileges'],
      ReadonlyRootfs: true,
      PidsLimit: PIDS_LIMIT,
      Memory: LOBBY_TIER.memoryMax,
      MemoryReservation: LOBBY_TIER.memory,
      CpuShares: LOBBY_TIER.cpu / 10,
      Privileged: false,
    });
    await stopReplica(r);
    expect(await docker.listContainers([`${LABELS.dataDir}=${dataDir}`])).toEqual([]);
    expect(await docker.inspectNetwork(networkName(dataDir))).toBeUndefined();
  });
});
