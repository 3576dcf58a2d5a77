// The container runner on a real daemon: an image made in the test from nothing (Node and its libraries), saved
// as `docker save` writes it, loaded through the runner (plain and LZ4), run with the lobby's environment on the
// host's network, its output demultiplexed into lines, stopped (SIGTERM, then SIGKILL) and removed; the sweep.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { hostname } from 'node:os';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDocker, DockerRunner, LABELS, networkFor, sweepContainers, urlFromContainer, type DockerDaemon } from '../../src/emulator/runtime/docker.js';
import { loadBuild } from '../../src/emulator/runtime/images.js';
import { processStart } from '../../src/emulator/runtime/process.js';
import { RunnerError, type OutputStream, type RunningServer } from '../../src/emulator/runtime/runtime.js';
import { compressFileLz4 } from '../../src/upload/lz4.js';
import { tempDir } from '../helpers/cli.js';
import { DOCKER, DOCKER_PRESENT, nodeImageTar } from '../helpers/docker.js';

const SERVER = `
const http = require('http');
console.log('hello ' + process.env.GREETING);
console.error('to stderr');
process.on('SIGTERM', () => { console.log('got SIGTERM'); if (process.env.MODE !== 'stubborn') process.exit(0); });
if (process.env.MODE === 'exit') process.exit(Number(process.env.CODE));
if (process.env.MODE === 'busy') setImmediate(function spin() { const t = Date.now(); while (Date.now() - t < 50); setImmediate(spin); });
if (process.env.READY_URL) http.get(process.env.READY_URL, (r) => r.resume());
if (process.env.LISTEN) http.createServer((q, s) => s.end('hi from inside')).listen(Number(process.env.LISTEN), '0.0.0.0');
setInterval(() => {}, 1000);
`;

describe('finding the daemon', () => {
  it('a DOCKER_HOST where nothing answers is one line naming it', async () => {
    const err = await connectDocker({ DOCKER_HOST: 'unix:///nonexistent/docker.sock' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RunnerError);
    expect((err as Error).message).toBe('no Docker daemon answers at unix:///nonexistent/docker.sock (ENOENT): start one, or set DOCKER_HOST');
    expect(await connectDocker({ DOCKER_HOST: 'ssh://me@host' }).catch((e: Error) => e.message)).toMatch(/ssh:\/\/ is not supported/);
  });

  it.skipIf(!DOCKER_PRESENT || process.platform !== 'linux')("the daemon says what it is: a Linux Docker Engine's containers take the host's network, Docker Desktop's ports are published", async () => {
    const info = await (DOCKER as DockerDaemon).info();
    expect(info.OperatingSystem).toMatch(/\S/);
    expect(networkFor('linux', info)).toBe(/Docker Desktop/.test(info.OperatingSystem!) ? 'published' : 'host');
  });

  it('the emulator\'s URL from inside a container: as it is on the host network, host.docker.internal where published', () => {
    expect(urlFromContainer('http://127.0.0.1:6420', 'host')).toBe('http://127.0.0.1:6420');
    expect(urlFromContainer('http://127.0.0.1:6420', 'published')).toBe('http://host.docker.internal:6420');
    expect(urlFromContainer('https://emulator.example:443/x', 'published')).toBe('https://emulator.example/x');
  });
});

// Containers start and stop in seconds alone, far slower on a loaded machine.
describe.skipIf(!DOCKER_PRESENT || process.platform !== 'linux')('the Docker runner', { timeout: 90_000 }, () => {
  const docker = DOCKER as DockerDaemon;
  const dataDir = tempDir('gamehost-docker-data-');
  const tag = `gamehost-test/server:${process.pid}-${Date.now()}`;
  let image = '';
  let tarFile = '';
  let runner: DockerRunner;

  beforeAll(async () => {
    tarFile = nodeImageTar(tempDir(), tag, { 'server.js': SERVER });
    image = await loadBuild(docker, { kind: 'docker_image', compression: 'none', open: () => fs.createReadStream(tarFile) });
    runner = new DockerRunner(docker, { image, owner: { dataDir, replica: 'test', pidStart: Date.now() } });
  }, 120_000);
  afterAll(async () => {
    // Whatever a failed test left running (the sweep spares this live process's containers).
    for (const c of await containersOf().catch(() => [])) await docker.removeContainer(c.Id).catch(() => {});
    if (image) await docker.removeImage(image).catch(() => {});
  });

  async function start(env: Record<string, string>): Promise<{ server: RunningServer; lines: { stream: OutputStream; text: string }[]; seen(text: string): Promise<void> }> {
    const lines: { stream: OutputStream; text: string }[] = [];
    const waiting: { text: string; resolve: () => void }[] = [];
    const server = await runner.start({
      env,
      workDir: tempDir(),
      ports: [{ label: 'default', protocol: 'tcp', port: 7777 }],
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

  it('runs it with the environment on the host network, lines per stream, labelled; a stop is SIGTERM and leaves no container', async () => {
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
      const s = await start({ GREETING: 'lobby', READY_URL: `http://127.0.0.1:${port}/ready` });
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

  it("published ports, Docker Desktop's way (on this Linux daemon): the server's port on the host's 127.0.0.1, the host reached from inside as host.docker.internal", async () => {
    // On Linux host.docker.internal is the bridge's gateway (host-gateway), not loopback: this listener takes every
    // address. (Docker Desktop takes the host's loopback there too.)
    let called!: (host: string | undefined) => void;
    const ready = new Promise<string | undefined>((resolve) => (called = resolve));
    const listener = http.createServer((req, res) => {
      res.end('ok');
      called(req.headers.host);
    });
    await new Promise<void>((resolve) => listener.listen(0, '0.0.0.0', resolve));
    // A free port of this host for the server's, published as itself.
    const free = http.createServer();
    await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
    const port = (free.address() as AddressInfo).port;
    await new Promise<void>((resolve) => free.close(() => resolve()));
    const publishedRunner = new DockerRunner(docker, { image, owner: { dataDir, replica: 'test', pidStart: Date.now() }, network: 'published', publishOn: '127.0.0.1' });
    const lines: string[] = [];
    const server = await publishedRunner.start({
      env: { LISTEN: String(port), READY_URL: urlFromContainer(`http://127.0.0.1:${(listener.address() as AddressInfo).port}/ready`, 'published') },
      workDir: tempDir(),
      ports: [{ label: 'default', protocol: 'tcp', port }],
      labels: { [LABELS.lobby]: 'published-lobby' },
      onLine: (_stream, line) => lines.push(line.toString()),
    });
    try {
      expect(await ready).toBe(`host.docker.internal:${(listener.address() as AddressInfo).port}`);
      const [info] = await containersOf();
      expect(info!.Labels[LABELS.lobby]).toBe('published-lobby');
      // The published port answers on the host's loopback once the server listens.
      let answer = '';
      for (let i = 0; i < 100 && answer === ''; i++) {
        answer = await fetch(`http://127.0.0.1:${port}/`).then(
          (r) => r.text(),
          () => '',
        );
        if (answer === '') await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(answer).toBe('hi from inside');
    } finally {
      expect(await server.stop(10_000)).toEqual({ code: 0, signal: null });
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


