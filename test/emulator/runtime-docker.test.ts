// The container runner on a real daemon: an image made in the test from nothing (Node and its libraries), saved
// as `docker save` writes it, loaded through the runner (plain and LZ4), run with the lobby's environment isolated
// on the emulator's bridge network (and on the host's, when asked), its output demultiplexed into lines, stopped
// (the daemon's stop: SIGTERM, then SIGKILL) and removed; the sweep. And the client under a bad daemon: a stalling
// proxy in front of its socket (timeouts, dropped waits, one stats call at a time), a daemon too old, a rootless
// daemon's socket.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { homedir, hostname } from 'node:os';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDocker, DockerRunner, emulatorNetwork, LABELS, networkName, PIDS_LIMIT, removeEmulatorContainers, sweepContainers, type BridgeNetwork, type DockerDaemon } from '../../src/emulator/runtime/docker.js';
import { DEFAULT_SOCKET, engineAddress, MIN_API_VERSION, rootlessSockets } from '../../src/emulator/runtime/engine-api.js';
import { loadBuild } from '../../src/emulator/runtime/images.js';
import { LOBBY_TIER } from '../../src/emulator/services/environment.js';
import { stallProxy, type StallProxy } from '../helpers/stall-proxy.js';
import { processStart } from '../../src/emulator/runtime/process.js';
import { RunnerError, type OutputStream, type RunningServer } from '../../src/emulator/runtime/runtime.js';
import { compressFileLz4 } from '../../src/shared/lz4.js';
import { tempDir } from '../helpers/cli.js';
import { DOCKER, DOCKER_PRESENT, freePort, nodeImageTar } from '../helpers/docker.js';
import { until } from '../helpers/lobby-server.js';

const SERVER = `
const http = require('http');
// Its handler before its first line: a test that stops it once it printed finds the handler there.
process.on('SIGTERM', () => { console.log('got SIGTERM'); if (process.env.MODE !== 'stubborn') process.exit(0); });
console.log('hello ' + process.env.GREETING);
console.error('to stderr');
if (process.env.MODE === 'exit') process.exit(Number(process.env.CODE));
if (process.env.MODE === 'busy') setImmediate(function spin() { const t = Date.now(); while (Date.now() - t < 50); setImmediate(spin); });
if (process.env.READY_URL) http.get(process.env.READY_URL, (r) => r.resume());
if (process.env.LISTEN) http.createServer((q, s) => s.end('hi from inside')).listen(Number(process.env.LISTEN), '0.0.0.0');
if (process.env.STATUS) {
  const fs = require('fs');
  for (const l of fs.readFileSync('/proc/self/status', 'utf8').split('\\n')) if (/^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):/.test(l)) console.log(l.replace(/\\s+/, ' '));
  for (const f of ['/app/written', '/tmp/written']) { try { fs.writeFileSync(f, 'x'); console.log('wrote ' + f); } catch (e) { console.log('cannot write ' + f + ': ' + e.code); } }
  console.log('status done');
}
setInterval(() => {}, 1000);
`;

describe('finding the daemon', () => {
  it('a DOCKER_HOST where nothing answers is one line naming it', async () => {
    const err = await connectDocker({ DOCKER_HOST: 'unix:///nonexistent/docker.sock' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RunnerError);
    expect((err as Error).message).toBe('no Docker daemon answers at unix:///nonexistent/docker.sock (ENOENT): start one, or set DOCKER_HOST');
    expect(await connectDocker({ DOCKER_HOST: 'ssh://me@host' }).catch((e: Error) => e.message)).toMatch(/ssh:\/\/ is not supported/);
  });

  it.skipIf(!DOCKER_PRESENT)(`the daemon speaks API ${MIN_API_VERSION} or newer; an older one is refused in one line naming both`, async () => {
    expect(Number((DOCKER as DockerDaemon).apiVersion.split('.')[1])).toBeGreaterThanOrEqual(Number(MIN_API_VERSION.split('.')[1]));
    // A daemon of Docker 19.03 (API 1.40), as far as its ping goes.
    const old = http.createServer((_req, res) => res.writeHead(200, { 'api-version': '1.40' }).end('OK'));
    await new Promise<void>((resolve) => old.listen(0, '127.0.0.1', resolve));
    try {
      const at = `tcp://127.0.0.1:${(old.address() as AddressInfo).port}`;
      expect(await connectDocker({ DOCKER_HOST: at }).catch((e: Error) => e.message)).toBe(
        `the Docker daemon at ${at} speaks API 1.40; --run-build needs API ${MIN_API_VERSION} (Docker 20.10) or newer`,
      );
    } finally {
      old.close();
    }
  });

  it("a rootless daemon's socket is found where testcontainers looks, once the default socket is not there", async () => {
    expect(rootlessSockets({ XDG_RUNTIME_DIR: '/run/user/1000' }, 1000)).toEqual(['/run/user/1000/docker.sock', path.join(homedir(), '.docker/run/docker.sock')]);
    expect(rootlessSockets({}, 42)).toEqual([path.join(homedir(), '.docker/run/docker.sock'), '/run/user/42/docker.sock']);
    const runtime = tempDir();
    // Nothing there: the default socket is named (the message says where it looked first).
    expect(engineAddress({ XDG_RUNTIME_DIR: runtime }, '/nonexistent/docker.sock').socketPath).toBe('/nonexistent/docker.sock');
    fs.writeFileSync(path.join(runtime, 'docker.sock'), '');
    expect(engineAddress({ XDG_RUNTIME_DIR: runtime }, '/nonexistent/docker.sock')).toMatchObject({ socketPath: path.join(runtime, 'docker.sock'), where: path.join(runtime, 'docker.sock') });
    // The default socket wins where it is, and DOCKER_HOST over both.
    expect(engineAddress({ XDG_RUNTIME_DIR: runtime }, DEFAULT_SOCKET).socketPath).toBe(fs.existsSync(DEFAULT_SOCKET) ? DEFAULT_SOCKET : path.join(runtime, 'docker.sock'));
    expect(engineAddress({ XDG_RUNTIME_DIR: runtime, DOCKER_HOST: 'unix:///x.sock' }, '/nonexistent/docker.sock').socketPath).toBe('/x.sock');
  });
});

// Containers start and stop in seconds alone, far slower on a loaded machine.
describe.skipIf(!DOCKER_PRESENT || process.platform !== 'linux')('the Docker runner', { timeout: 90_000 }, () => {
  const docker = DOCKER as DockerDaemon;
  const dataDir = tempDir('gamehost-docker-data-');
  const tag = `gamehost-test/server:${process.pid}-${Date.now()}`;
  let image = '';
  let tarFile = '';
  let bridge: BridgeNetwork;
  const owner = { dataDir, replica: 'test', pidStart: Date.now() };
  // Isolated, as --run-build runs every container unless told otherwise; and on the host's network, when told.
  let runner: DockerRunner;
  let hostRunner: DockerRunner;

  beforeAll(async () => {
    tarFile = nodeImageTar(tempDir(), tag, { 'server.js': SERVER });
    image = await loadBuild(docker, { kind: 'docker_image', compression: 'none', open: () => fs.createReadStream(tarFile) });
    bridge = await emulatorNetwork(docker, dataDir);
    runner = new DockerRunner(docker, { image, owner, network: { mode: 'bridge', name: bridge.name, publishOn: '127.0.0.1', emulatorHost: bridge.gateway } });
    hostRunner = new DockerRunner(docker, { image, owner, network: { mode: 'host' } });
  }, 120_000);
  afterAll(async () => {
    // Whatever a failed test left running (the sweep spares this live process's containers), and the network.
    for (const c of await containersOf().catch(() => [])) await docker.removeContainer(c.Id).catch(() => {});
    await docker.removeNetwork(networkName(dataDir)).catch(() => {});
    if (image) await docker.removeImage(image).catch(() => {});
  });

  async function start(
    env: Record<string, string>,
    opts: { runner?: DockerRunner; port?: number } = {},
  ): Promise<{ server: RunningServer; lines: { stream: OutputStream; text: string }[]; seen(text: string): Promise<void> }> {
    const lines: { stream: OutputStream; text: string }[] = [];
    const waiting: { text: string; resolve: () => void }[] = [];
    const server = await (opts.runner ?? runner).start({
      env,
      workDir: tempDir(),
      ports: [{ label: 'default', protocol: 'tcp', port: opts.port ?? (await freePort()) }],
      labels: { [LABELS.lobby]: 'test-lobby' },
      onLine(stream, line) {
        lines.push({ stream, text: line.toString() });
        for (const w of waiting.splice(0)) (w.text === line.toString() ? w.resolve() : waiting.push(w));
      },
    });
    return {
      server,
      lines,
      seen: (text) => (lines.some((l) => l.text === text) ? Promise.resolve() : new Promise((resolve) => waiting.push({ text, resolve }))),
    };
  }

  const containersOf = async () =>
    docker.listContainers([`${LABELS.dataDir}=${dataDir}`]);

  it('loads the build by its ID, never the tag the tar names; the same image from its LZ4 form', async () => {
    expect(image).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await docker.imageTags(image)).toEqual([]);
    expect(await docker.hasImage(tag)).toBe(false);
    const lz4 = path.join(tempDir(), 'image.tar.lz4');
    await compressFileLz4(tarFile, lz4);
    expect(await loadBuild(docker, { kind: 'docker_image', compression: 'lz4', open: () => fs.createReadStream(lz4) })).toBe(image);
  });

  it('refuses an oci_bundle build, and a tar that is no image, in one line', async () => {
    const open = () => fs.createReadStream(tarFile);
    await expect(loadBuild(docker, { kind: 'oci_bundle', compression: 'none', open })).rejects.toThrow(
      'oci_bundle builds are not run yet: push a docker_image build (docker save) to run it',
    );
    const junk = path.join(tempDir(), 'junk.tar');
    fs.writeFileSync(junk, 'not a tar at all');
    await expect(loadBuild(docker, { kind: 'docker_image', compression: 'none', open: () => fs.createReadStream(junk) })).rejects.toThrow(
      'the build is not an image tar Docker can load (docker save writes one)',
    );
    await expect(loadBuild(docker, { kind: 'docker_image', compression: 'lz4', open: () => fs.createReadStream(junk) })).rejects.toThrow(
      "the build's LZ4 compression: not an LZ4 frame (its first bytes are not the LZ4 magic number)",
    );
    // Bytes gone from under the store (a data directory tidied by hand): said in one line, the cause with it.
    const gone = () => Promise.reject(new Error('ENOENT: no such file or directory'));
    await expect(loadBuild(docker, { kind: 'docker_image', compression: 'none', open: gone })).rejects.toThrow(
      "the build's bytes cannot be read: ENOENT: no such file or directory",
    );
  });

  it('runs it with the environment on the host network when told to, lines per stream, labelled; a stop is SIGTERM and leaves no container', async () => {
    // The server calls a listener on this host's loopback: host networking keeps the packet on this machine.
    let called!: () => void;
    const ready = new Promise<void>((resolve) => (called = resolve));
    const listener = http.createServer((_req, res) => {
      res.end('ok');
      called();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = listener.address() as AddressInfo;
      const s = await start({ GREETING: 'lobby', READY_URL: `http://127.0.0.1:${port}/ready` }, { runner: hostRunner });
      await ready;
      await s.seen('to stderr');
      expect(s.lines.filter((l) => l.stream === 'stdout').map((l) => l.text)).toContain('hello lobby');
      expect(s.lines.filter((l) => l.stream === 'stderr').map((l) => l.text)).toEqual(['to stderr']);
      const [info] = await containersOf();
      expect(info!.Labels).toMatchObject({ [LABELS.lobby]: 'test-lobby', [LABELS.replica]: 'test', [LABELS.pid]: String(process.pid) });
      expect(s.server.description).toBe(`container ${info!.Id.slice(0, 12)}`);
      expect(await s.server.stop(10_000)).toEqual({ code: 0, signal: null });
      expect(s.lines.map((l) => l.text)).toContain('got SIGTERM');
      expect(await containersOf()).toEqual([]);
    } finally {
      listener.close();
    }
  });

  it("isolated by default: the emulator's bridge network, no capability but NET_BIND_SERVICE, no new privileges, a read-only root, the tier's limits; its port published on the host, the emulator reached at the gateway", async () => {
    // Where the emulator's listener for containers binds: this host's address on their network.
    let called!: (host: string | undefined) => void;
    const ready = new Promise<string | undefined>((resolve) => (called = resolve));
    const listener = http.createServer((req, res) => {
      res.end('ok');
      called(req.headers.host);
    });
    await new Promise<void>((resolve) => listener.listen(0, bridge.gateway, resolve));
    const { port: listening } = listener.address() as AddressInfo;
    const port = await freePort();
    const s = await start({ LISTEN: String(port), STATUS: '1', READY_URL: `http://host.docker.internal:${listening}/ready`, RIVET_MEMORY: String(LOBBY_TIER.memory), RIVET_MEMORY_OVERSUBSCRIBE: String(LOBBY_TIER.memoryMax), RIVET_CPU: '1000' }, { port });
    try {
      // host.docker.internal is the gateway, where the emulator listens for it.
      expect(await ready).toBe(`host.docker.internal:${listening}`);
      const [info] = await containersOf();
      const inspect = await docker.inspectContainer(info!.Id);
      expect(inspect.HostConfig.NetworkMode).toBe(bridge.name);
      expect(inspect.HostConfig).toMatchObject({
        CapDrop: ['ALL'],
        CapAdd: ['NET_BIND_SERVICE'],
        SecurityOpt: ['no-new-privileges'],
        ReadonlyRootfs: true,
        Tmpfs: { '/tmp': expect.stringMatching(/^rw,/) },
        PidsLimit: PIDS_LIMIT,
        Memory: LOBBY_TIER.memoryMax,
        MemoryReservation: LOBBY_TIER.memory,
        CpuShares: 100,
        Privileged: false,
      });
      // The image's own user (this one names none: root in the container, without root's capabilities).
      expect(inspect.Config?.User ?? '').toBe('');
      // The published port answers on the host's loopback once the server listens.
      expect(await until('the published port', () => fetch(`http://127.0.0.1:${port}/`).then((r) => r.text(), () => undefined))).toBe('hi from inside');
      // From inside: no capability but NET_BIND_SERVICE (bit 10) held, bounded, or to be gained (no new privileges);
      // NET_RAW (bit 13), which AF_PACKET and SOCK_RAW sockets need, is none of them. The root is read-only, /tmp not.
      await s.seen('status done');
      const status = Object.fromEntries(s.lines.filter((l) => /^(Cap|NoNewPrivs)/.test(l.text)).map((l) => l.text.split(' ') as [string, string]));
      expect(status).toEqual({ 'CapInh:': '0000000000000000', 'CapPrm:': '0000000000000400', 'CapEff:': '0000000000000400', 'CapBnd:': '0000000000000400', 'CapAmb:': '0000000000000000', 'NoNewPrivs:': '1' });
      expect(s.lines.map((l) => l.text)).toEqual(expect.arrayContaining(['cannot write /app/written: EROFS', 'wrote /tmp/written']));
    } finally {
      expect(await s.server.stop(10_000)).toEqual({ code: 0, signal: null });
      listener.close();
    }
    expect(await containersOf()).toEqual([]);
  });

  it('what ignores SIGTERM is killed after the grace period', async () => {
    const s = await start({ MODE: 'stubborn' });
    await s.seen('hello undefined');
    expect(await s.server.stop(500)).toEqual({ code: null, signal: 'SIGKILL' });
    expect(await containersOf()).toEqual([]);
  });

  it('a server that exits by itself: its code, and its container removed', async () => {
    const s = await start({ MODE: 'exit', CODE: '3' });
    expect(await s.server.exited).toEqual({ code: 3, signal: null });
    expect(s.lines.map((l) => l.text)).toContain('to stderr');
    expect(await containersOf()).toEqual([]);
    expect(await s.server.sample()).toBeUndefined();
  });

  it('samples CPU and memory through the stats API', async () => {
    const s = await start({ MODE: 'busy' });
    await s.seen('to stderr');
    const sample = (await s.server.sample())!;
    expect(sample.cpu).toBeGreaterThan(5);
    expect(sample.memory).toBeGreaterThan(5 * 1024 * 1024);
    await s.server.stop(5_000);
  });

  it('the sweep removes what a dead emulator left in this data directory (its pid ended, or given to another process since), and nothing of a live one', async () => {
    // A pid that no longer runs: a process that has ended.
    const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
    const deadPid = dead.stdout.trim();
    // A live process other than this one (the test's parent), as it is, and as if its pid were a dead emulator's.
    const other = process.ppid;
    const otherStart = (await processStart(other))!;
    expect(otherStart).toBeGreaterThan(0);
    const labels = (pid: number | string, start?: number) => ({
      [LABELS.dataDir]: dataDir,
      [LABELS.host]: hostname(),
      [LABELS.pid]: String(pid),
      ...(start === undefined ? {} : { [LABELS.pidStart]: String(start) }),
      [LABELS.replica]: 'test',
    });
    const left = await docker.createContainer({ Image: image, Labels: labels(deadPid, Date.now() - 60_000) });
    const reused = await docker.createContainer({ Image: image, Labels: labels(other, otherStart - 3_600_000) });
    const live = await docker.createContainer({ Image: image, Labels: labels(other, otherStart) });
    const mine = await docker.createContainer({ Image: image, Labels: labels(process.pid, Date.now()) });
    // Made before the start time was a label: a live pid is taken at its word.
    const older = await docker.createContainer({ Image: image, Labels: labels(other) });
    expect(await sweepContainers(docker, dataDir)).toBe(2);
    const remaining = (await containersOf()).map((c) => c.Id);
    expect(remaining.sort()).toEqual([live, mine, older].sort());
    expect(remaining).not.toContain(left);
    expect(remaining).not.toContain(reused);
    for (const id of [live, mine, older]) await docker.removeContainer(id);
  });
});



// The client under a bad daemon: a proxy in front of the daemon's socket that stalls (accepts, answers nothing) or
// drops its connections, as a daemon that hangs or restarts does.
describe.skipIf(!DOCKER_PRESENT || process.platform !== 'linux')('the Docker client under a bad daemon', { timeout: 90_000 }, () => {
  const docker = DOCKER as DockerDaemon;
  const dataDir = tempDir('gamehost-docker-bad-');
  const tag = `gamehost-test/bad-daemon:${process.pid}-${Date.now()}`;
  let image = '';
  let proxy: StallProxy;
  let through: DockerDaemon;
  let runner: DockerRunner;
  // The stall test's client and runner: calls that time out after 2 s. The others keep the default timeout, since a
  // container's start took over 2 s on this busy 2-core machine and failed a test that stalls nothing.
  let quick: DockerDaemon;
  let quickRunner: DockerRunner;
  const containers = () => docker.listContainers([`${LABELS.dataDir}=${dataDir}`]);

  beforeAll(async () => {
    const tarFile = nodeImageTar(tempDir(), tag, { 'server.js': SERVER });
    image = await loadBuild(docker, { kind: 'docker_image', compression: 'none', open: () => fs.createReadStream(tarFile) });
    const address = engineAddress(process.env);
    const origin = new URL(address.origin);
    proxy = address.socketPath !== undefined ? await stallProxy(address.socketPath) : await stallProxy(origin.hostname, Number(origin.port));
    through = await connectDocker({ DOCKER_HOST: `tcp://${proxy.host}:${proxy.port}` });
    quick = await connectDocker({ DOCKER_HOST: `tcp://${proxy.host}:${proxy.port}` }, { timeoutMs: 2_000 });
    const bridge = await emulatorNetwork(docker, dataDir);
    const runnerOptions = { image, owner: { dataDir, replica: 'bad', pidStart: Date.now() }, network: { mode: 'bridge' as const, name: bridge.name, publishOn: '127.0.0.1', emulatorHost: bridge.gateway } };
    runner = new DockerRunner(through, runnerOptions);
    quickRunner = new DockerRunner(quick, runnerOptions);
  }, 120_000);
  afterAll(async () => {
    proxy?.resume();
    await through?.close().catch(() => {});
    await quick?.close().catch(() => {});
    await proxy?.close();
    for (const c of await containers().catch(() => [])) await docker.removeContainer(c.Id).catch(() => {});
    await docker.removeNetwork(networkName(dataDir)).catch(() => {});
    if (image) await docker.removeImage(image).catch(() => {});
  });

  const startServer = async () => {
    const lines: string[] = [];
    const server = await runner.start({ env: { GREETING: 'proxied' }, workDir: tempDir(), ports: [], labels: { [LABELS.lobby]: 'bad-lobby' }, onLine: (_s, l) => lines.push(l.toString()) });
    await until('its first lines', async () => (lines.includes('to stderr') ? true : undefined));
    return server;
  };

  it('a dropped wait is not an exit: the container is inspected, still running, and waited for again; the stop is the daemon\'s (stop?t=N), one request', async () => {
    const server = await startServer();
    let exited = false;
    void server.exited.then(() => (exited = true));
    const waits = proxy.requests(/\/wait\?/);
    proxy.drop();
    // The runner asks what became of it, and waits again.
    await until('a second wait', async () => (proxy.requests(/\/wait\?/) > waits ? true : undefined));
    expect(proxy.requests(/\/containers\/\w+\/json/)).toBeGreaterThan(0);
    const [c] = await containers();
    expect((await docker.inspectContainer(c!.Id)).State.Running).toBe(true);
    expect(exited).toBe(false);
    const kills = proxy.requests(/\/kill/);
    expect(await server.stop(10_000)).toEqual({ code: 0, signal: null });
    expect(proxy.requests(/\/stop\?t=10 /)).toBe(1);
    expect(proxy.requests(/\/kill/)).toBe(kills);
    expect(await containers()).toEqual([]);
  });

  it('one stats call in flight per container: samples asked together share it', async () => {
    const server = await startServer();
    try {
      const before = proxy.requests(/\/stats\?/);
      const [a, b] = [server.sample(), server.sample()];
      expect(a).toBe(b);
      expect((await a)?.memory).toBeGreaterThan(0);
      expect(proxy.requests(/\/stats\?/)).toBe(before + 1);
    } finally {
      await server.stop(10_000);
    }
  });

  it('every call but the waits has a timeout: a daemon that answers nothing is one line naming the call, not a hang', async () => {
    proxy.stall();
    try {
      await expect(quick.listContainers([])).rejects.toThrow(`the Docker daemon at tcp://${proxy.host}:${proxy.port} did not answer GET /containers/json within 2 s`);
      const err = await quickRunner.start({ env: {}, workDir: tempDir(), ports: [], onLine: () => {} }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RunnerError);
      expect((err as Error).message).toBe(`Docker could not create a container of ${image}: the Docker daemon at tcp://${proxy.host}:${proxy.port} did not answer POST /containers/create within 2 s`);
    } finally {
      // What was held is dropped, not delivered late.
      proxy.drop();
      proxy.resume();
    }
    expect((await through.listContainers([`${LABELS.dataDir}=${dataDir}`])).length).toBe(0);
  });
});

describe.skipIf(!DOCKER_PRESENT || process.platform !== 'linux')('emulator reset\'s part', { timeout: 60_000 }, () => {
  it("removes every container an emulator of the data directory made on this host, and its network; another data directory's stay", async () => {
    const docker = DOCKER as DockerDaemon;
    const [mine, theirs] = [tempDir('gamehost-reset-'), tempDir('gamehost-reset-other-')];
    await emulatorNetwork(docker, mine);
    const labels = (dataDir: string) => ({ [LABELS.dataDir]: dataDir, [LABELS.host]: hostname(), [LABELS.pid]: String(process.pid) });
    // Any image will do for a container that never starts: the daemon's own hello-world is not here, so a tiny one.
    const tag = `gamehost-test/reset:${process.pid}-${Date.now()}`;
    const image = await loadBuild(docker, { kind: 'docker_image', compression: 'none', open: () => fs.createReadStream(nodeImageTar(tempDir(), tag, { 'server.js': '' })) });
    try {
      await docker.createContainer({ Image: image, Labels: labels(mine) });
      await docker.createContainer({ Image: image, Labels: labels(mine) });
      const other = await docker.createContainer({ Image: image, Labels: labels(theirs) });
      expect(await removeEmulatorContainers(docker, mine)).toBe(2);
      expect(await docker.listContainers([`${LABELS.dataDir}=${mine}`])).toEqual([]);
      expect(await docker.inspectNetwork(networkName(mine))).toBeUndefined();
      expect((await docker.listContainers([`${LABELS.dataDir}=${theirs}`])).map((c) => c.Id)).toEqual([other]);
      // Nothing left: nothing to do, no error.
      expect(await removeEmulatorContainers(docker, mine)).toBe(0);
      await docker.removeContainer(other);
    } finally {
      await docker.removeImage(image).catch(() => {});
    }
  });
});
