// A Docker daemon for the container tests, found as the docker CLI finds it (DOCKER_HOST, else the default socket).
// Where there is none the tests skip and say why; under CI they fail instead (.ci/run starts one). And images made
// in the test from nothing (FROM scratch): this Node binary and the libraries it has loaded, with a script.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as tar from 'tar';
import { connectDocker, type DockerDaemon } from '../../src/emulator/runtime/docker.js';
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

/** The interpreter an ELF binary names (PT_INTERP), e.g. /lib64/ld-linux-x86-64.so.2; undefined for a static one. */
function interpreterOf(file: string): string | undefined {
  const elf = fs.readFileSync(file);
  if (elf.readUInt32BE(0) !== 0x7f454c46 || elf[4] !== 2) return undefined; // 64-bit ELF only
  const phoff = Number(elf.readBigUInt64LE(0x20));
  const size = elf.readUInt16LE(0x36);
  for (let i = 0; i < elf.readUInt16LE(0x38); i++) {
    const at = phoff + i * size;
    if (elf.readUInt32LE(at) !== 3) continue;
    const offset = Number(elf.readBigUInt64LE(at + 8));
    const length = Number(elf.readBigUInt64LE(at + 32));
    return elf.subarray(offset, offset + length - 1).toString();
  }
  return undefined;
}

/**
 * Writes a `docker save` tar of an image made from nothing: this Node, the shared libraries this process has mapped
 * (read from /proc/self/maps, so no ldd) and its interpreter, and `files` (path → content) under /app; its entry
 * point is `node /app/server.js`. Linux only. Answers the tar's path.
 */
export function nodeImageTar(dir: string, tag: string, files: Record<string, string>): string {
  const root = path.join(dir, 'rootfs');
  const copy = (from: string, to = from) => {
    const target = path.join(root, to);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.copyFileSync(fs.realpathSync(from), target);
    fs.chmodSync(target, 0o755);
  };
  copy(process.execPath, '/usr/bin/node');
  const libs = new Set(
    fs
      .readFileSync('/proc/self/maps', 'utf8')
      .split('\n')
      .map((l) => (l.includes('/') ? l.slice(l.indexOf('/')) : ''))
      .filter((p) => /\/lib[^/]*\/.*\.so(\.\d+)*$/.test(p) && fs.existsSync(p)),
  );
  for (const lib of libs) {
    copy(lib);
    // The names the loader looks for (libstdc++.so.6) are links to the file mapped (libstdc++.so.6.0.30).
    const dir = path.dirname(lib);
    const stem = path.basename(lib).replace(/\.so(\.\d+)*$/, '.so');
    for (const name of fs.readdirSync(dir)) {
      const other = path.join(dir, name);
      if (name.startsWith(stem) && other !== lib && fs.lstatSync(other).isSymbolicLink() && fs.realpathSync(other) === fs.realpathSync(lib)) copy(other);
    }
  }
  const interp = interpreterOf(process.execPath);
  if (interp) copy(interp);
  fs.mkdirSync(path.join(root, 'tmp'), { recursive: true });
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, 'app', name)), { recursive: true });
    fs.writeFileSync(path.join(root, 'app', name), content);
  }

  const image = path.join(dir, 'image');
  fs.mkdirSync(path.join(image, 'layer'), { recursive: true });
  const layer = path.join(image, 'layer', 'layer.tar');
  tar.c({ file: layer, cwd: root, portable: true, sync: true }, fs.readdirSync(root));
  const diffId = `sha256:${createHash('sha256').update(fs.readFileSync(layer)).digest('hex')}`;
  const config = JSON.stringify({
    architecture: process.arch === 'x64' ? 'amd64' : process.arch,
    os: 'linux',
    config: { Entrypoint: ['/usr/bin/node', '/app/server.js'], Env: ['PATH=/usr/bin'], WorkingDir: '/app' },
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
