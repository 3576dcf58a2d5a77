// Acceptance (issue 30): the official-SDK game (test/fixtures/game-server.mjs) in a container on the emulator's
// bridge network, across two PostgreSQL replicas, both `emulator serve --run-build` on one database: the build
// pushed through A, the client finding through A (whose container runs the lobby), connecting to the published port,
// the server's ready, player connected and disconnected calls made at A's lobby-routes listener; the lobby's lines and
// players read through B. Needs Docker and PostgreSQL (skipped without, failed under CI).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS, networkName, type DockerDaemon } from '../../src/emulator/runtime/docker.js';
import { runBin } from '../helpers/bin.js';
import { tempDir } from '../helpers/cli.js';
import { DOCKER, DOCKER_PRESENT, gameServerImage, removeEmulatorLeftovers } from '../helpers/docker.js';
import { findLobby, lobbyJson, logLines, say, until } from '../helpers/lobby-server.js';
import { createTestDatabase, PG_PRESENT } from '../helpers/postgres.js';
import { replicaEnv, serve, stopReplica, type Replica } from '../helpers/replica.js';

const IMAGE = `gamehost-test/run-build-replicas:${process.pid}-${Date.now()}`;

describe.skipIf(!DOCKER_PRESENT || !PG_PRESENT || process.platform !== 'linux')('the SDK game in a container on the bridge network, across two PostgreSQL replicas', { timeout: 180_000 }, () => {
  const docker = DOCKER as DockerDaemon;
  const replicas: Replica[] = [];
  const dataDirs = [tempDir('gamehost-rb-a-'), tempDir('gamehost-rb-b-')];
  let imageTar = '';

  beforeAll(async () => {
    imageTar = await gameServerImage(tempDir(), IMAGE);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(replicas.map(stopReplica));
    await removeEmulatorLeftovers(dataDirs);
  }, 60_000);

  it('find through A, the server on the published port, ready, a player connected and disconnected, its lines through B', async () => {
    const database = await createTestDatabase();
    replicas.push(...(await Promise.all(dataDirs.map((dir) => serve(['--run-build', '--data-dir', dir, '--database', database], { DOCKER_HOST: process.env.DOCKER_HOST })))));
    const [a, b] = replicas as [Replica, Replica];
    // Through A: each replica keeps the bytes in its own data directory (a bucket shares them), the records in the database.
    const pushed = await runBin(['build', 'push', imageTar, '--tag', 'game-server:v1'], replicaEnv(tempDir(), a));
    expect(pushed.code, pushed.stderr).toBe(0);

    const { lobbyId, found } = await findLobby(a);
    const seat = await found;
    expect(seat.lobby.lobbyId).toBe(lobbyId);
    const [container] = await docker.listContainers([`${LABELS.lobby}=${lobbyId}`], { running: true });
    expect((await docker.inspectContainer(container!.Id)).HostConfig.NetworkMode).toBe(networkName(dataDirs[0]!));

    const port = seat.ports.default!.port!;
    expect(await say(port, seat.player.token)).toBe('ok');
    expect(await say(port, `bye ${seat.player.token}`)).toBe('bye');
    // Its lines, through B: it listened, called ready, admitted the player.
    const lines = await until('the lines through B', async () => {
      const out = await logLines(b, lobbyId, 'std_out');
      return out.includes('admitted a player') ? out : undefined;
    });
    expect(lines).toEqual(['listening on ' + port, 'ready', 'admitted a player']);
    // The player left: the lobby, idle with the default rule, is stopped; its container goes.
    // (Read with the CLI: the SDK's parser refuses the `"running": null` production sends beside `stopped`.)
    expect(await until('the lobby stopped, through B', async () => (await lobbyJson(b, lobbyId)).lobby.status.stopped ?? undefined)).toMatchObject({ failed: false });
    await until('its container gone', async () => ((await docker.listContainers([`${LABELS.lobby}=${lobbyId}`])).length === 0 ? true : undefined));
  });
});
