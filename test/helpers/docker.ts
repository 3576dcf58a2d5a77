// A Docker daemon for the container tests, found as the docker CLI finds it (DOCKER_HOST, else the default socket).
// Where there is none the tests skip and say why; under CI they fail instead (.ci/run starts one). And images made
// in the test from nothing (FROM scratch): this Node binary and the libraries it has loaded, with a script.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar';
import type { AddressInfo } from 'node:net';
import { connectDocker, LABELS, type DockerDaemon } from '../../src/emulator/runtime/docker.js';
import { engineAddress } from '../../src/emulator/runtime/engine-api.js';
import { isCI } from '../../src/output/ci.js';

async function find(): Promise<{ daemon?: DockerDaemon; missing: string }> {
  try {
    return { daemon: await connectDocker(process.env), missing: '' };
  } catch (err) {
    return { missing: (err as Error).message };
  }
}

const found = await find();
export const DOCKER: DockerDaemon | undefined = found.daemon;
export const DOCKER_PRESENT = DOCKER !== undefined;
if (!DOCKER_PRESENT && isCI(process.env)) throw new Error(`Docker tests cannot run: ${found.missing}; in CI a daemon must be there`);
if (!DOCKER_PRESENT) console.warn(`Docker tests skipped: ${found.missing}`);

const NODE_BASE = path.resolve(import.meta.dirname, '../../examples/node-sdk/node-base.mjs');

/**
 * Fills `root` with what Node needs to run from nothing (this Node as /usr/bin/node and its libraries: the base
 * image of examples/node-sdk, made by its node-base.mjs, run by this Node), and `files` (path → content, or
 * `{ from }` a file to copy) under /app. Linux only.
 */
function nodeRootfs(root: string, files: Record<string, string | { from: string }>): void {
  if (path.basename(root) !== 'rootfs') throw new Error(`nodeRootfs: ${root} is not a rootfs directory`);
  const made = spawnSync(process.execPath, [NODE_BASE, path.dirname(root)], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`node-base.mjs: ${made.stderr}`);
  for (const [name, content] of Object.entries(files)) {
    const target = path.join(root, 'app', name);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    if (typeof content === 'string') fs.writeFileSync(target, content);
    else fs.copyFileSync(content.from, target);
  }
}

/**
 * Writes a `docker save` tar of an image made from nothing (nodeRootfs) without a daemon; its entry point is
 * `node /app/<entry>` (server.js unless given). Answers the tar's path.
 */
export function nodeImageTar(dir: string, tag: string, files: Record<string, string | { from: string }>, entry = 'server.js'): string {
  const root = path.join(dir, 'rootfs');
  nodeRootfs(root, files);

  const image = path.join(dir, 'image');
  fs.mkdirSync(path.join(image, 'layer'), { recursive: true });
  const layer = path.join(image, 'layer', 'layer.tar');
  tar.c({ file: layer, cwd: root, portable: true, sync: true }, fs.readdirSync(root));
  const diffId = `sha256:${createHash('sha256').update(fs.readFileSync(layer)).digest('hex')}`;
  const config = JSON.stringify({
    architecture: process.arch === 'x64' ? 'amd64' : process.arch,
    os: 'linux',
    config: { Entrypoint: ['/usr/bin/node', `/app/${entry}`], Env: ['PATH=/usr/bin'], WorkingDir: '/app' },
    rootfs: { type: 'layers', diff_ids: [diffId] },
  });
  const configName = `${createHash('sha256').update(config).digest('hex')}.json`;
  fs.writeFileSync(path.join(image, configName), config);
  fs.writeFileSync(path.join(image, 'manifest.json'), JSON.stringify([{ Config: configName, RepoTags: [tag], Layers: ['layer/layer.tar'] }]));
  const out = path.join(dir, 'image.tar');
  tar.c({ file: out, cwd: image, portable: true, sync: true }, ['manifest.json', configName, 'layer']);
  fs.rmSync(root, { recursive: true, force: true });
  fs.rmSync(image, { recursive: true, force: true });
  return out;
}

/** One request to the daemon for what only tests ask of it (build, save); a socket or plain tcp DOCKER_HOST. */
function engine(method: string, pathname: string, body?: fs.ReadStream): Promise<http.IncomingMessage> {
  const address = engineAddress(process.env);
  const origin = new URL(address.origin);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        method,
        path: `${address.basePath}${pathname}`,
        ...(address.socketPath !== undefined ? { socketPath: address.socketPath } : { host: origin.hostname, port: origin.port }),
        headers: body ? { 'content-type': 'application/x-tar' } : {},
      },
      (res) => {
        if ((res.statusCode ?? 500) < 300) return resolve(res);
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => reject(new Error(`${method} ${pathname}: ${res.statusCode} ${text.trim()}`)));
      },
    );
    req.once('error', reject);
    if (body) body.pipe(req);
    else req.end();
  });
}

/** `docker build` of the context directory `context` through the Engine API (the legacy builder, offline) as `tag`. */
export async function buildImage(context: string, tag: string, buildargs: Record<string, string> = {}): Promise<void> {
  const contextTar = `${context}.tar`;
  tar.c({ file: contextTar, cwd: context, portable: true, sync: true }, fs.readdirSync(context));
  const query = new URLSearchParams({ t: tag, rm: '1', forcerm: '1', q: '1', buildargs: JSON.stringify(buildargs) });
  const built = await engine('POST', `/build?${query}`, fs.createReadStream(contextTar));
  let progress = '';
  for await (const chunk of built) progress += chunk.toString();
  fs.rmSync(contextTar);
  const failed = progress
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { error?: string })
    .find((m) => m.error !== undefined);
  if (failed) throw new Error(`docker build ${tag}: ${failed.error}`);
}

/** `docker save <tag> -o <out>` through the Engine API (GET /images/{name}/get). */
export async function saveImage(tag: string, out: string): Promise<void> {
  await pipeline(await engine('GET', `/images/${encodeURIComponent(tag)}/get`), fs.createWriteStream(out));
}

/**
 * An image built by the daemon from a scratch base (`docker build` through the Engine API: a Dockerfile `FROM
 * scratch` copying in nodeRootfs) and saved as `docker save` writes it (GET /images/{name}/get) to `<dir>/image.tar`;
 * the image is then removed from the daemon, so whoever runs the tar loads it. Its entry point is
 * `node /app/<entry>`, with `env` set in the image (ENV). Answers the tar's path.
 */
export async function buildAndSaveImage(dir: string, tag: string, files: Record<string, string | { from: string }>, entry: string, env: Record<string, string> = {}): Promise<string> {
  const context = path.join(dir, 'context');
  nodeRootfs(path.join(context, 'rootfs'), files);
  fs.writeFileSync(
    path.join(context, 'Dockerfile'),
    `FROM scratch\nCOPY rootfs/ /\nENV PATH=/usr/bin\n${Object.entries(env)
      .map(([k, v]) => `ENV ${k}=${JSON.stringify(v)}\n`)
      .join('')}WORKDIR /app\nENTRYPOINT ["/usr/bin/node", "/app/${entry}"]\n`,
  );
  await buildImage(context, tag);
  fs.rmSync(context, { recursive: true, force: true });
  const out = path.join(dir, 'image.tar');
  await saveImage(tag, out);
  await DOCKER!.removeImage(tag);
  return out;
}

const ROOT = path.resolve(import.meta.dirname, '../..');
const SDK = path.join(ROOT, 'node_modules/@rivet-gg/api');

/**
 * The official-SDK game server (test/fixtures/game-server.mjs) as an image tar in `dir`: the fixture and the SDK's
 * Node build (one bundled file) under /app, as a studio's image would hold them, listening on every address (on its
 * bridge network the published port arrives on the container's own address, not its loopback).
 */
export function gameServerImage(dir: string, tag: string): Promise<string> {
  return buildAndSaveImage(
    dir,
    tag,
    {
      'server.mjs': { from: path.join(ROOT, 'test/fixtures/game-server.mjs') },
      'node_modules/@rivet-gg/api/package.json': { from: path.join(SDK, 'package.json') },
      'node_modules/@rivet-gg/api/dist/node/index.js': { from: path.join(SDK, 'dist/node/index.js') },
    },
    'server.mjs',
    { GAME_SERVER_HOST: '0.0.0.0' },
  );
}

/** A test's clean-up: the containers emulators of these data directories made, and the images they loaded. */
export async function removeEmulatorLeftovers(dataDirs: string[]): Promise<void> {
  for (const dir of dataDirs) {
    for (const c of await DOCKER!.listContainers([`${LABELS.dataDir}=${dir}`]).catch(() => [])) await DOCKER!.removeContainer(c.Id).catch(() => {});
    for (const image of recordedImages(dir)) await DOCKER!.removeImage(image).catch(() => {});
  }
}

/** A port of this host free now, for a server's, published as itself. */
export async function freePort(): Promise<number> {
  const free = http.createServer();
  await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
  const { port } = free.address() as AddressInfo;
  await new Promise<void>((resolve) => free.close(() => resolve()));
  return port;
}

/** The image IDs an emulator of `dataDir` recorded as loaded for its builds (its images.json), for a test's clean-up. */
export function recordedImages(dataDir: string): string[] {
  let record: { daemons?: Record<string, Record<string, { image: string }>> };
  try {
    record = JSON.parse(fs.readFileSync(path.join(dataDir, 'images.json'), 'utf8'));
  } catch {
    return [];
  }
  return Object.values(record.daemons ?? {}).flatMap((builds) => Object.values(builds).map((b) => b.image));
}

/** One JSON answer of the daemon (GET), for what a test looks at: `/images/json?all=1` (docker images -a), `/system/df`. */
export async function engineJson<T>(pathname: string): Promise<T> {
  let text = '';
  for await (const chunk of await engine('GET', pathname)) text += chunk.toString();
  return JSON.parse(text) as T;
}

/** `docker tag <image> repo:tag`: a name given by a person, not by the emulator. */
export async function tagImage(image: string, repo: string, tag: string): Promise<void> {
  (await engine('POST', `/images/${encodeURIComponent(image)}/tag?${new URLSearchParams({ repo, tag })}`)).resume();
}
