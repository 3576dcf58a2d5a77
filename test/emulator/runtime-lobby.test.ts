// The seam the lobbies service calls: a lobby's server started from its id, environment, ports and how to run it;
// what it prints comes back through the logs routes (so through the Store), its samples are kept for metrics.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GAME_ID } from '../../src/emulator/index.js';
import { isRunning } from '../../src/emulator/runtime/process.js';
import { startLobbyServer } from '../../src/emulator/runtime/lobby.js';
import { BuildImages } from '../../src/emulator/runtime/images.js';
import { LABELS } from '../../src/emulator/runtime/docker.js';
import { tempDir } from '../helpers/cli.js';
import { DOCKER, DOCKER_PRESENT, nodeImageTar } from '../helpers/docker.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';

const POSIX = process.platform !== 'win32';

const CONTAINERS = DOCKER_PRESENT && process.platform === 'linux';

describe.skipIf(!POSIX)('startLobbyServer', () => {
  let t: TestEmulator;
  const tag = `gamehost-test/lobby:${process.pid}-${Date.now()}`;
  let tar = '';
  beforeAll(async () => {
    // Before the emulator: writing the image takes seconds of this thread, which would let the server drop a
    // kept-alive connection just as the client reuses it.
    if (CONTAINERS) tar = nodeImageTar(tempDir(), tag, { 'server.js': 'console.log("container says " + process.env.RIVET_LOBBY_ID); setInterval(() => {}, 1000);' });
    t = await startTestEmulator({ startDelayMs: 0, readyDelayMs: 0 }, { logWatch: { minMs: 0, pollMs: 20, waitMs: 2_000 } });
  }, 120_000);
  afterAll(async () => {
    // Containers a failed test left (this data directory's), before the directory goes.
    if (DOCKER) {
      const left = await DOCKER.listContainers([`${LABELS.dataDir}=${t.dataDir}`]).catch(() => []);
      for (const c of left) await DOCKER.removeContainer(c.Id).catch(() => {});
    }
    await t.stop();
  });

  async function newLobby(): Promise<string> {
    const res = await t.call('POST', '/matchmaker/lobbies/create', { token: t.tokens.public, body: { game_mode: 'default' } });
    return res.json.lobby.lobby_id;
  }
  /** The lines the logs route answers: the most recent, or (with a watch index) the oldest after it. */
  const lines = async (lobbyId: string, stream: string, watchIndex?: string): Promise<string[]> => {
    const query = `stream=${stream}${watchIndex === undefined ? '' : `&watch_index=${watchIndex}`}`;
    const res = await t.call('GET', `/cloud/games/${GAME_ID}/matchmaker/lobbies/${lobbyId}/logs?${query}`, { token: t.tokens.cloud });
    return res.json.lines.map((l: string) => Buffer.from(l, 'base64').toString());
  };

  it('a command: in a directory of the lobby\'s own, the lobby\'s environment over this process\'s; every line in the logs once it exits', async () => {
    const lobbyId = await newLobby();
    const workRoot = path.join(t.dataDir, 'lobbies');
    process.env.GAMEHOST_TEST_BENEATH = 'from the emulator';
    try {
      const run = await startLobbyServer({
        lobbyId,
        env: { RIVET_LOBBY_ID: lobbyId, GAMEHOST_TEST_BENEATH: 'from the lobby' },
        ports: [],
        run: { command: 'echo "lobby $RIVET_LOBBY_ID"; echo "$GAMEHOST_TEST_BENEATH"; pwd; for i in $(seq 1 500); do echo "line $i"; done; echo bye >&2; exit 4' },
        workRoot,
        logs: t.services.logs,
      });
      expect(await run.exited).toMatchObject({ code: 4, signal: null, at: expect.any(Number) });
      const out = await lines(lobbyId, 'std_out');
      expect(out.slice(-3)).toEqual(['line 498', 'line 499', 'line 500']);
      expect(out).toHaveLength(256);
      expect(await lines(lobbyId, 'std_err')).toEqual(['bye']);
      const first = await lines(lobbyId, 'std_out', '0');
      expect(first.slice(0, 3)).toEqual([`lobby ${lobbyId}`, 'from the lobby', path.join(workRoot, lobbyId)]);
      // It ran there (pwd above), and left nothing in it: the directory went with it.
      expect(fs.existsSync(path.join(workRoot, lobbyId))).toBe(false);
    } finally {
      delete process.env.GAMEHOST_TEST_BENEATH;
    }
  });

  it('samples while it runs, keeping the last few; a stop ends its tree', async () => {
    const lobbyId = await newLobby();
    const run = await startLobbyServer({
      lobbyId,
      env: {},
      ports: [],
      run: { command: 'echo "pid $$"; sleep 300 & echo "pid $!"; wait' },
      workRoot: tempDir(),
      logs: t.services.logs,
      sampleEveryMs: 30,
      keepSamples: 3,
    });
    let pids: number[] = [];
    try {
      while (run.samples().length < 3) await new Promise((r) => setTimeout(r, 30));
      const samples = run.samples();
      expect(samples).toHaveLength(3);
      for (const s of samples) expect(s.memory).toBeGreaterThan(0);
      expect(samples[2]!.ts).toBeGreaterThanOrEqual(samples[0]!.ts);
      // Wait for both pids to be in the Store, then stop.
      while (pids.length < 2) {
        await new Promise((r) => setTimeout(r, 50));
        pids = (await lines(lobbyId, 'std_out')).map((l: string) => Number(l.split(' ')[1]));
      }
      expect(pids.every(isRunning)).toBe(true);
    } finally {
      expect((await run.stop(2_000)).signal).toBe('SIGTERM');
    }
    expect(pids.filter(isRunning)).toEqual([]);
  });

  it.skipIf(!CONTAINERS)('a build: loaded once by ID, run in a container labelled with the lobby, its lines in the logs', async () => {
    const docker = DOCKER!;
    const build = { id: crypto.randomUUID(), gameId: GAME_ID, kind: 'docker_image', compression: 'none', open: () => fs.createReadStream(tar) };
    const owner = { dataDir: t.dataDir, replica: 'lobby-test', pidStart: Date.now() };
    const images = new BuildImages(docker, { dataDir: t.dataDir });
    let image = '';
    try {
      for (let i = 0; i < 2; i++) {
        const lobbyId = await newLobby();
        let loads = 0;
        image = await images.imageFor(build, async () => void loads++);
        // Loaded for the first lobby only: the second runs the image the first loaded (its tar is gone by then).
        expect(loads).toBe(i === 0 ? 1 : 0);
        const run = await startLobbyServer({ lobbyId, env: { RIVET_LOBBY_ID: lobbyId }, ports: [], run: { image, docker, owner, network: { mode: 'host' } }, workRoot: tempDir(), logs: t.services.logs });
        try {
          while ((await lines(lobbyId, 'std_out')).length === 0) await new Promise((r) => setTimeout(r, 50));
          expect(await lines(lobbyId, 'std_out')).toEqual([`container says ${lobbyId}`]);
          const listed = await docker.listContainers([`${LABELS.lobby}=${lobbyId}`], { running: true });
          expect(listed.map((c) => c.Labels[LABELS.replica])).toEqual(['lobby-test']);
          // By its ID, whatever the tar called it: the tar's name never reached the daemon.
          expect(listed.map((c) => c.Image)).toEqual([image]);
          expect(await docker.hasImage(tag)).toBe(false);
        } finally {
          // Node as the server has no SIGTERM handler: the signal ends it.
          expect(await run.stop(5_000)).toMatchObject({ code: null, signal: 'SIGTERM' });
        }
        expect(await docker.listContainers([`${LABELS.lobby}=${lobbyId}`])).toEqual([]);
        fs.rmSync(tar, { force: true });
      }
      // An image removed since is loaded again, not assumed there: here that fails, its tar being gone.
      await docker.removeImage(image);
      await expect(images.imageFor(build)).rejects.toThrow(/^the build's bytes cannot be read: ENOENT/);
    } finally {
      if (image) await docker.removeImage(image).catch(() => {});
    }
    // Making and loading a 100 MiB image takes a few seconds alone, and far longer on a loaded machine.
  }, 180_000);
});
