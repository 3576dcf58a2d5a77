// Acceptance (issue 25), `emulator serve --run-build`: the game server on the official SDK (the fixture of the
// --run tests) packed into an image the daemon builds from a scratch base (Node and its libraries copied in), saved
// as `docker save` writes it, pushed LZ4-compressed with the real `gamehost build push`, and run by the emulator in
// a container for each lobby: find waits for its ready, it admits the player, its lines come back through the logs
// API, its exit code stops the lobby, its CPU and memory are the metrics. No container is left after a lobby
// stops (by its exit, or through the API), after serve stops (SIGTERM), nor after serve is killed (SIGKILL) and
// started again (the start sweep).
// Builds that cannot run (none, an oci_bundle) stop the lobby failed with one line, in serve's output and the
// lobby's std_err. Needs a Docker daemon (skipped without one, failed under CI). The image is built once for the
// file, in its temp dir: about 13 s of the file's 35-50 s on 2 busy cores (the 100 MiB Node binary, built and saved).
import fs from 'node:fs';
import path from 'node:path';
import { RivetClient, RivetError } from '@rivet-gg/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS, networkName, type DockerDaemon } from '../../src/emulator/runtime/docker.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { DOCKER, DOCKER_PRESENT, gameServerImage } from '../helpers/docker.js';
import { listBuilds } from '../helpers/emulator.js';
import { findLobby, lobbyJson, logLines, say, until } from '../helpers/lobby-server.js';
import { replicaEnv, serve, stopReplica, type Replica } from '../helpers/replica.js';
import { runBin } from '../helpers/bin.js';

const TAG = 'game-server:v1';
// The image's own name in Docker, apart from other tests' on the same daemon.
const IMAGE = `gamehost-test/run-build:${process.pid}-${Date.now()}`;

/** A find whose lobby stopped before its server was ready: the lobby's id, from the service's message. */
async function stoppedFind(r: Replica): Promise<string> {
  const client = new RivetClient({ environment: r.info.endpoint, token: r.info.tokens.public });
  const err = await client.matchmaker.lobbies.find({ gameModes: ['default'] }).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(RivetError);
  const body = (err as RivetError).body as { code: string; message: string };
  expect(body.code).toBe('MATCHMAKER_LOBBY_STOPPED');
  return /^Lobby (\S+) has stopped\.$/.exec(body.message)![1]!;
}

describe.skipIf(!DOCKER_PRESENT || process.platform !== 'linux')('emulator serve --run-build: a pushed build run in a container per lobby', { timeout: 180_000 }, () => {
  const docker = DOCKER as DockerDaemon;
  const dataDir = tempDir('gamehost-run-build-data-');
  const home = tempDir();
  const replicas: Replica[] = [];
  let imageTar = '';
  // The images the emulator loaded, each under its build's own name.
  const loaded: string[] = [];
  let configFile = '';

  const containers = (opts: { running?: boolean } = {}) => docker.listContainers([`${LABELS.dataDir}=${dataDir}`], opts);
  const start = async (args: string[]) => {
    const r = await serve(['--data-dir', dataDir, '--config', configFile, ...args], { DOCKER_HOST: process.env.DOCKER_HOST });
    replicas.push(r);
    return r;
  };

  beforeAll(async () => {
    const began = Date.now();
    imageTar = await gameServerImage(tempDir(), IMAGE);
    console.log(`run-build: image built and saved in ${Date.now() - began} ms (${fs.statSync(imageTar).size} bytes)`);
    configFile = path.join(tempDir(), 'emulator.json');
    fs.writeFileSync(configFile, JSON.stringify({ startDelayMs: 0, readyDelayMs: 0, readyWindowMs: 60_000 }));
  }, 180_000);

  afterAll(async () => {
    await Promise.all(replicas.map(stopReplica));
    for (const c of await containers().catch(() => [])) await docker.removeContainer(c.Id).catch(() => {});
    for (const image of [...loaded, IMAGE]) await docker.removeImage(image).catch(() => {});
  }, 60_000);

  it('without a complete build, or with an oci_bundle, the lobby stops failed and says why in one line', async () => {
    const r = await start(['--run-build']);
    const none = { lobbyId: await stoppedFind(r) };
    const noneLine = `[emulator] its server did not start: game ${r.info.game_id} has no complete build to run: push one with \`gamehost build push <file> --tag <name:tag>\``;
    expect(await logLines(r, none.lobbyId, 'std_err')).toEqual([noneLine]);
    expect((await lobbyJson(r, none.lobbyId)).lobby.status.stopped).toMatchObject({ exit_code: 1, failed: true });

    const bundle = tempDir();
    fs.mkdirSync(path.join(bundle, 'rootfs'));
    fs.writeFileSync(path.join(bundle, 'config.json'), '{}');
    const pushed = await runBin(['build', 'push', bundle, '--tag', 'game-server:oci'], replicaEnv(home, r));
    expect(pushed.code, pushed.stderr).toBe(0);
    const oci = { lobbyId: await stoppedFind(r) };
    const [ociLine] = await logLines(r, oci.lobbyId, 'std_err');
    expect(ociLine).toBe('[emulator] its server did not start: oci_bundle builds are not run yet: push a docker_image build (docker save) to run it');
    // The same lines in serve's own output, one each, naming the lobby.
    expect(r.stderr()).toContain(`[emulator] lobby ${none.lobbyId}: ${noneLine.slice('[emulator] '.length)}\n`);
    expect(r.stderr()).toContain(`[emulator] lobby ${oci.lobbyId}: ${ociLine!.slice('[emulator] '.length)}\n`);
    expect(await containers()).toEqual([]);
  });

  it('the pushed image runs for a found lobby: ready, admits, its lines, its metrics; its exit code stops the lobby and its container goes', async () => {
    const r = replicas[0]!;
    const began = Date.now();
    // LZ4 on the way up: the emulator undoes it before `docker load`.
    const pushed = await runBin(['build', 'push', imageTar, '--tag', TAG, '--compression', 'lz4'], replicaEnv(home, r));
    expect(pushed.code, pushed.stderr).toBe(0);
    const { lobbyId, found } = await findLobby(r);
    const seat = await found;
    console.log(`run-build: pushed, then found a lobby whose container called ready, in ${Date.now() - began} ms`);
    expect(seat.lobby.lobbyId).toBe(lobbyId);
    const build = (await listBuilds(r.info.endpoint)).find((b) => b.image_tag === TAG)!;
    const [container] = await containers({ running: true });
    expect(container?.Labels[LABELS.lobby]).toBe(lobbyId);
    // Started by the image's ID, which the data directory records as this build's; the tar's name never reached Docker.
    expect(container?.Image).toMatch(/^sha256:[0-9a-f]{64}$/);
    loaded.push(container!.Image!);
    const record = JSON.parse(fs.readFileSync(path.join(dataDir, 'images.json'), 'utf8'));
    expect(Object.values(record.daemons).map((builds) => (builds as Record<string, { image: string }>)[build.build_id]?.image)).toContain(container!.Image);
    expect(await docker.hasImage(IMAGE)).toBe(false);
    // Its owner as the store records the lobby's: the replica id kept in the data directory, and serve's process.
    expect(container?.Labels[LABELS.replica]).toBe(fs.readFileSync(path.join(dataDir, 'replica'), 'utf8').trim());
    expect(container?.Labels[LABELS.pid]).toBe(String(r.child.pid));

    const port = seat.ports.default!.port!;
    expect(await say(port, seat.player.token)).toBe('ok');
    expect(await say(port, seat.player.token)).toBe('refused MATCHMAKER_PLAYER_ALREADY_CONNECTED');
    expect(await until('the ready line', async () => ((await logLines(r, lobbyId, 'std_out')).includes('ready') ? true : undefined))).toBe(true);

    // The container's own samples (the first 1 s after it starts, then one per 5 s), not the synthetic curve. An
    // idle server can spend no CPU at all between two samples (its start can fall before the first on a fast
    // machine), so it burns some: a sample taken after the burn has it.
    const before = (await lobbyJson(r, lobbyId)).metrics.cpu.length;
    expect(await say(port, 'burn 1000')).toMatch(/^burned \d+$/);
    const metrics = await until(
      'a sample of the container after its burn',
      async () => {
        const m = (await lobbyJson(r, lobbyId)).metrics;
        return m.cpu.length > before && Math.max(...m.cpu) > 0 ? m : undefined;
      },
      20_000,
    );
    expect(metrics.cpu).toHaveLength(metrics.memory.length);
    expect(metrics.cpu.every((c: number) => c >= 0)).toBe(true);
    expect(metrics.memory.every((m: number) => m > 0 && m < 512 * 1024 * 1024)).toBe(true);

    expect(await say(port, 'exit 3')).toBe('');
    const stopped = await until('the lobby stopped', async () => (await lobbyJson(r, lobbyId)).lobby.status.stopped ?? undefined);
    expect(stopped).toMatchObject({ exit_code: 3, failed: true });
    await until('its container gone', async () => ((await containers()).length === 0 ? true : undefined));
  });

  it('a lobby stopped through the API takes its container with it', async () => {
    const r = replicas[0]!;
    const { lobbyId, found } = await findLobby(r);
    await found;
    expect(await containers({ running: true })).toHaveLength(1);
    const stopped = await runCli(['emulator', 'lobby', 'stop', lobbyId], { env: replicaEnv(tempDir(), r) });
    expect(stopped.code, stopped.stderr).toBe(0);
    // The stop answers once the container is gone.
    expect(await containers()).toEqual([]);
    expect((await lobbyJson(r, lobbyId)).lobby.status.stopped).toMatchObject({ exit_code: 0, failed: false });
  });

  it('serve stopped (SIGTERM) stops its containers and records their lobbies stopped', async () => {
    const r = replicas[0]!;
    const { lobbyId, found } = await findLobby(r);
    await found;
    expect(await containers({ running: true })).toHaveLength(1);
    r.child.kill('SIGTERM');
    expect((await r.exit).code).toBe(0);
    expect(await containers()).toEqual([]);

    // Started again, by the tag this time: the lobby is stopped, the server's SIGTERM exit recorded.
    const again = await start(['--run-build', TAG]);
    expect((await lobbyJson(again, lobbyId)).lobby.status.stopped).toBeDefined();
  });

  it('serve killed (SIGKILL) leaves its container, which the next serve of the data directory removes at start', async () => {
    const r = replicas.at(-1)!;
    const { found } = await findLobby(r);
    await found;
    const [left] = await containers({ running: true });
    expect(left).toBeDefined();
    r.child.kill('SIGKILL');
    await r.exit;
    expect((await containers()).map((c) => c.Id)).toEqual([left!.Id]);

    const next = await start(['--run-build', TAG]);
    expect(await containers()).toEqual([]);
    expect(next.stderr()).toContain('[emulator] removed 1 container(s) an emulator of this data directory left when it stopped');
    await stopReplica(next);
    expect(await containers()).toEqual([]);
  });

  it('emulator reset after a killed serve removes its container and its network with the data', async () => {
    const r = await start(['--run-build', TAG]);
    const { found } = await findLobby(r);
    await found;
    const running = await containers({ running: true });
    expect(running).toHaveLength(1);
    const image = running[0]!.Image!;
    expect(await docker.hasImage(image)).toBe(true);
    expect(await docker.inspectNetwork(networkName(dataDir))).toBeDefined();
    r.child.kill('SIGKILL');
    await r.exit;
    const reset = await runBin(['emulator', 'reset', '--yes', '--json', '--data-dir', dataDir], { ...replicaEnv(home, r), ...(process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}) });
    expect(reset.code, reset.stderr).toBe(0);
    expect(JSON.parse(reset.stdout)).toMatchObject({ data_dir: dataDir, containers: 1, images: 1 });
    expect(await containers()).toEqual([]);
    expect(await docker.inspectNetwork(networkName(dataDir))).toBeUndefined();
    // The image it loaded for the build went too: by its ID, which the record (now deleted) held.
    expect(await docker.hasImage(image)).toBe(false);
  });

  it("with no tag, each lobby runs the build its version names: after a deploy new lobbies run B, the old one keeps A", async () => {
    const r = await start(['--run-build']);
    const env = replicaEnv(home, r);
    const push = async (tag: string) => {
      const pushed = await runBin(['build', 'push', imageTar, '--tag', tag, '-q', '--progress', 'none'], env);
      expect(pushed.code, pushed.stderr).toBe(0);
      return pushed.stdout.trim();
    };
    const [a, b] = [await push('game-server:a'), await push('game-server:b')];
    const project = tempDir();
    const deploy = async (build: string, name: string) => {
      fs.writeFileSync(path.join(project, 'rivet.yaml'), `matchmaker:\n  docker:\n    image_id: ${build}\n    ports:\n      default: { port: 7777, protocol: tcp }\n  game_modes:\n    default: {}\n`);
      const deployed = await runBin(['deploy', 'prod', '--name', name, '-c', path.join(project, 'rivet.yaml')], env);
      expect(deployed.code, deployed.stderr).toBe(0);
    };
    // Which build each loaded image is, as the data directory records it (builds of the same bytes share one).
    const loadedBuilds = () => {
      const record = JSON.parse(fs.readFileSync(path.join(dataDir, 'images.json'), 'utf8')) as { daemons: Record<string, Record<string, unknown>> };
      return Object.values(record.daemons).flatMap((builds) => Object.keys(builds));
    };
    await deploy(a, 'run-a');
    const first = await findLobby(r);
    const seat = await first.found;
    expect(await say(seat.ports.default!.port!, seat.player.token)).toBe('ok');
    expect(loadedBuilds()).toEqual([a]);
    await deploy(b, 'run-b');
    const second = await findLobby(r);
    const other = await second.found;
    expect(other.lobby.lobbyId).not.toBe(first.lobbyId);
    expect(await say(other.ports.default!.port!, other.player.token)).toBe('ok');
    expect(loadedBuilds().sort()).toEqual([a, b].sort());
    // Both run: the old lobby (build A, its player in it) and the new one.
    expect((await containers({ running: true })).map((c) => c.Labels[LABELS.lobby]).sort()).toEqual([first.lobbyId, second.lobbyId].sort());
    await stopReplica(r);
    expect(await containers()).toEqual([]);
  });
});
