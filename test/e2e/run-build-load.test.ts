// `emulator serve --run-build` loads a build's image outside the lobby's ready window: a load that takes longer than
// the window (held here by a proxy in front of the daemon's socket, which holds the load request until the test lets
// it go) no longer stops the lobby the moment its server starts; the window starts with the container, and the find
// that made the lobby is answered once the server calls ready. The server is the official-SDK fixture in an image
// made from nothing (no daemon build). Needs a Docker daemon on a unix socket (skipped without one, failed under CI).
import fs from 'node:fs';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/emulator/runtime/docker.js';
import { engineAddress } from '../../src/emulator/runtime/engine-api.js';
import { tempDir } from '../helpers/cli.js';
import { DOCKER, DOCKER_PRESENT, nodeImageTar, recordedImages } from '../helpers/docker.js';
import { findLobby, lobbyJson, logLines, until } from '../helpers/lobby-server.js';
import { runBin } from '../helpers/bin.js';
import { replicaEnv, serve, stopReplica, type Replica } from '../helpers/replica.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SDK = path.join(ROOT, 'node_modules/@rivet-gg/api');
const SOCKET = DOCKER_PRESENT ? engineAddress(process.env).socketPath : undefined;
// Long enough for the server to start and call ready on a busy machine once its container runs; the load is held
// for longer than it.
const READY_WINDOW_MS = 6_000;

/** A TCP front of the daemon's socket that holds the first `POST …/images/load` until release() (what a slow load looks like). */
async function loadHolder(socketPath: string) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let seen!: () => void;
  const sawLoad = new Promise<void>((resolve) => (seen = resolve));
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(socketPath);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    upstream.pipe(client);
    client.on('data', (chunk: Buffer) => {
      if (/^POST \S*\/images\/load/.test(chunk.toString('latin1', 0, 80))) {
        seen();
        client.pause();
        void released.then(() => {
          upstream.write(chunk);
          client.resume();
        });
        return;
      }
      upstream.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    host: `tcp://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sawLoad,
    release,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe.skipIf(!DOCKER_PRESENT || process.platform !== 'linux' || SOCKET === undefined)('a build whose image loads for longer than the ready window', { timeout: 180_000 }, () => {
  const dataDir = tempDir('gamehost-run-build-load-');
  let r: Replica | undefined;
  let holder: Awaited<ReturnType<typeof loadHolder>> | undefined;
  afterAll(async () => {
    await stopReplica(r);
    await holder?.close();
    for (const c of await DOCKER!.listContainers([`${LABELS.dataDir}=${dataDir}`]).catch(() => [])) await DOCKER!.removeContainer(c.Id).catch(() => {});
    for (const image of recordedImages(dataDir)) await DOCKER!.removeImage(image).catch(() => {});
  }, 60_000);

  it('still becomes ready: the window starts when the container does, and the find is answered', async () => {
    const tar = nodeImageTar(
      tempDir(),
      `gamehost-test/slow-load:${process.pid}`,
      {
        'server.mjs': { from: path.join(ROOT, 'test/fixtures/game-server.mjs') },
        'node_modules/@rivet-gg/api/package.json': { from: path.join(SDK, 'package.json') },
        'node_modules/@rivet-gg/api/dist/node/index.js': { from: path.join(SDK, 'dist/node/index.js') },
      },
      'server.mjs',
    );
    holder = await loadHolder(SOCKET!);
    const config = path.join(tempDir(), 'emulator.json');
    fs.writeFileSync(config, JSON.stringify({ startDelayMs: 0, readyDelayMs: 0, readyWindowMs: READY_WINDOW_MS }));
    r = await serve(['--run-build', '--data-dir', dataDir, '--config', config], { DOCKER_HOST: holder.host });
    const pushed = await runBin(['build', 'push', tar, '--tag', 'game-server:slow'], replicaEnv(tempDir(), r));
    expect(pushed.code, pushed.stderr).toBe(0);

    const { lobbyId, found } = await findLobby(r);
    await holder.sawLoad;
    // The load outlasts the window by half (what is tested is that this time passing does not stop the lobby).
    await sleep(1.5 * READY_WINDOW_MS);
    expect((await lobbyJson(r, lobbyId)).lobby.status.stopped).toBeUndefined();
    holder.release();
    const seat = await found;
    expect(seat.lobby.lobbyId).toBe(lobbyId);
    expect(await until('the ready line', async () => ((await logLines(r!, lobbyId, 'std_out')).includes('ready') ? true : undefined))).toBe(true);
    // Past the window of its creation, and still running: the window started with its container.
    const lobby = (await lobbyJson(r, lobbyId)).lobby;
    expect(lobby.status.stopped).toBeUndefined();
    expect(await logLines(r, lobbyId, 'std_err')).toEqual([]);
  });
});
