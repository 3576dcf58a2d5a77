// Container budget (Linux, a Docker daemon): a lobby's find-to-ready under `emulator serve --run-build` at most 1.5x
// the time a bare container of the same image takes from its create to its ready call, side by side (A B A B …,
// medians). The image is made here with no registry: examples/node-sdk/node-base.mjs's context (this machine's Node
// and its libraries, FROM scratch) with a server that makes its ready call (POST $RIVET_API_ENDPOINT/matchmaker/
// lobbies/ready with its RIVET_TOKEN) and exits. Under serve: pushed once with `build push`, and one find run first
// so its load is out of the measure (a build loads once); each run is a find (the public token), from the request
// sent to its answer, which the emulator gives once the server's ready call came: the create, the container's
// start on the emulator's bridge network (isolated, with its limits), the ready and the answer. The bare run: the
// Engine API's create and start of the same image on Docker's default bridge, plain (no limits), from the create
// call to the ready call's arrival at a listener here on that bridge's gateway; the container removed after it.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import * as tar from 'tar';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin', 'gamehost.js');
const RUNS = Number(process.env.BENCH_CONTAINER_RUNS ?? 7);
const BUDGET = 1.5;
const SERVER = `const http = require('node:http');
const req = http.request(process.env.RIVET_API_ENDPOINT + '/matchmaker/lobbies/ready', { method: 'POST', headers: { authorization: 'Bearer ' + process.env.RIVET_TOKEN }, agent: false }, (res) => { res.resume(); res.once('end', () => process.exit(res.statusCode === 200 ? 0 : 1)); });
req.once('error', (err) => { console.error(err.message); process.exit(1); });
req.end();
`;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export async function runContainerBench() {
  if (process.platform !== 'linux') {
    console.error('container bench: skipped (Linux only: the image is this machine\'s Node)');
    return true;
  }
  const { connectDocker } = await import(new URL('../dist/emulator/runtime/docker.js', import.meta.url).href);
  let docker;
  try {
    docker = await connectDocker(process.env);
  } catch (err) {
    console.error(`container bench: skipped (${err.message})`);
    return true;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gamehost-bench-container-'));
  const tag = `gamehost-bench/ready:${process.pid}`;
  let serve;
  const bareListener = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    bareListener.emit('ready-call', req.headers['x-run'] ?? '');
  });
  try {
    // The image: node-base's context, the server added, built by the daemon and saved as `docker save` writes it.
    const context = path.join(dir, 'context');
    const made = spawnSync(process.execPath, [path.join(ROOT, 'examples/node-sdk/node-base.mjs'), context], { encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`node-base: ${made.stderr}`);
    fs.writeFileSync(path.join(context, 'rootfs', 'server.js'), SERVER);
    fs.appendFileSync(path.join(context, 'Dockerfile'), 'ENTRYPOINT ["/usr/bin/node", "/server.js"]\n');
    const contextTar = path.join(dir, 'context.tar');
    tar.c({ file: contextTar, cwd: context, portable: true, sync: true }, ['Dockerfile', 'rootfs']);
    fs.rmSync(context, { recursive: true, force: true });
    await engine(docker, 'POST', `/build?${new URLSearchParams({ t: tag, rm: '1', forcerm: '1', q: '1' })}`, fs.createReadStream(contextTar), true);
    const imageTar = path.join(dir, 'image.tar');
    const saved = await engine(docker, 'GET', `/images/${encodeURIComponent(tag)}/get`);
    await new Promise((resolve, reject) => saved.pipe(fs.createWriteStream(imageTar)).once('finish', resolve).once('error', reject));

    // The bare runs' listener, on the default bridge's gateway.
    // (Docker 20.10 lists the default bridge's subnet alone: its gateway is the subnet's first address, docker0's.)
    const subnet = (await docker.inspectNetwork('bridge')).IPAM.Config.find((c) => c.Subnet && !c.Subnet.includes(':'));
    const gateway = subnet.Gateway ?? subnet.Subnet.split('/')[0].replace(/\.\d+$/, (last) => `.${Number(last.slice(1)) + 1}`);
    await new Promise((resolve) => bareListener.listen(0, gateway, resolve));
    const endpoint = `http://${gateway}:${bareListener.address().port}`;

    // serve --run-build, the build pushed, one find to load it.
    const dataDir = path.join(dir, 'data');
    const config = path.join(dir, 'emulator.json');
    fs.writeFileSync(config, JSON.stringify({ startDelayMs: 0, readyDelayMs: 0 }));
    serve = await startServe(['--data-dir', dataDir, '--config', config, '--run-build']);
    const { info } = serve;
    const env = { ...process.env, HOME: dir, GAMEHOST_ENDPOINT: info.endpoint, GAMEHOST_TOKEN: info.tokens.cloud, GAMEHOST_GAME: info.game_id };
    const pushed = spawnSync(process.execPath, [BIN, 'build', 'push', imageTar, '--tag', 'bench:v1', '-q'], { env, encoding: 'utf8' });
    if (pushed.status !== 0) throw new Error(`build push: ${pushed.stderr}`);
    await find(info);

    const served = [];
    const bare = [];
    for (let i = 0; i < RUNS; i++) {
      bare.push(await bareRun(docker, tag, endpoint, bareListener, i));
      served.push(await find(info));
    }
    const ratio = median(served) / median(bare);
    const ok = ratio <= BUDGET;
    console.error(
      `container find-to-ready: median ${median(served).toFixed(0)} ms under serve --run-build (bridge network, limits), ${median(bare).toFixed(0)} ms for a bare container create+start to its ready call: ${ratio.toFixed(2)}x (budget ${BUDGET}x) ${ok ? 'ok' : 'OVER BUDGET'}`,
    );
    return ok;
  } finally {
    await serve?.stop();
    bareListener.close();
    await docker.removeImage(tag).catch(() => {});
    await docker.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** One request to the daemon the runner's client has no call for (build, save), on its socket or tcp address. */
async function engine(docker, method, pathname, body, progress = false) {
  const { engineAddress } = await import(new URL('../dist/emulator/runtime/engine-api.js', import.meta.url).href);
  const address = engineAddress(process.env);
  const origin = new URL(address.origin);
  const res = await new Promise((resolve, reject) => {
    const req = http.request(
      { method, path: `${address.basePath}${pathname}`, ...(address.socketPath ? { socketPath: address.socketPath } : { host: origin.hostname, port: origin.port }), headers: body ? { 'content-type': 'application/x-tar' } : {} },
      resolve,
    );
    req.once('error', reject);
    if (body) body.pipe(req);
    else req.end();
  });
  if (res.statusCode >= 300) throw new Error(`${method} ${pathname}: ${res.statusCode}`);
  if (!progress) return res;
  let text = '';
  for await (const chunk of res) text += chunk;
  const failed = text.split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((m) => m.error);
  if (failed) throw new Error(`docker build: ${failed.error}`);
  return res;
}

/** `gamehost emulator serve --port 0 --json` with `args`: its start line, and a stop that waits for its exit. */
export async function startServe(args) {
  const child = spawn(process.execPath, [BIN, 'emulator', 'serve', '--port', '0', '--json', ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const line = await new Promise((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`gamehost emulator serve exited ${code} before it listened`)));
  });
  return {
    info: JSON.parse(line),
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** A find, from its request to its answer (the lobby ready); the next waits for no stop: each server exits at once. */
async function find(info) {
  const t0 = performance.now();
  const res = await fetch(`${info.endpoint}/matchmaker/lobbies/find`, {
    method: 'POST',
    headers: { authorization: `Bearer ${info.tokens.public}`, 'content-type': 'application/json' },
    body: JSON.stringify({ game_modes: ['default'] }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`find: ${res.status} ${text}`);
  return performance.now() - t0;
}

/** A bare container of the image: from its create to its ready call here; removed once it exited. */
async function bareRun(docker, image, endpoint, listener, n) {
  const t0 = performance.now();
  const arrived = new Promise((resolve) => listener.once('ready-call', () => resolve(performance.now())));
  const id = await docker.createContainer({ Image: image, Env: [`RIVET_API_ENDPOINT=${endpoint}`, `RIVET_TOKEN=bench-${n}`] });
  const exited = docker.waitContainer(id);
  await docker.startContainer(id);
  const at = await arrived;
  await exited;
  await docker.removeContainer(id);
  return at - t0;
}
