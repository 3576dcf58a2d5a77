// `build push --image`: an image of the local Docker daemon pushed as it is (GET /images/{name}/get), no `docker save`
// step; and buildDockerfile (src/upload/docker.ts), which `deploy` will build with. The image is made here by
// buildDockerfile from a Dockerfile FROM scratch (a static file copied in), pushed by the real bin to an emulator,
// and the build's bytes compared with the daemon's own export. Needs a Docker daemon (skipped without one, failed
// under CI); the usage errors need none.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as tar from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DockerEngine } from '../../src/emulator/runtime/engine-api.js';
import { buildDockerfile, ignoreMatcher } from '../../src/upload/docker.js';
import { tagFromImage } from '../../src/commands/build/push.js';
import { runBin } from '../helpers/bin.js';
import { isolatedEnv, runCli, tempDir } from '../helpers/cli.js';
import { DOCKER, DOCKER_PRESENT, engineJson, saveImage } from '../helpers/docker.js';
import { endpointEnv, listBuilds, storedBuild, useEmulator } from '../helpers/emulator.js';

// Apart from other tests' images on the same daemon.
const IMAGE = `gamehost-test/push-image:${process.pid}-${Date.now()}`;
const dockerEnv = (): Record<string, string> => (process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {});

describe('build push --image: what is refused before anything is sent', () => {
  it.each([
    [['build', 'push', 'server.tar', '--image', 'game:v1', '--tag', 'a:b'], 'error: give a file or --image, not both (server.tar and --image game:v1)\n'],
    [['build', 'push', '--tag', 'a:b'], 'error: nothing to push: give a file, a directory, - for stdin, or --image <name:tag>\n'],
    [['build', 'push', '--image', 'game:v1', '--kind', 'oci_bundle'], 'error: --image exports a docker_image; it cannot be pushed as --kind oci_bundle\n'],
  ])('%j exits 2 with one line', async (args, line) => {
    const r = await runCli(args, { env: isolatedEnv() });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(line);
  });

  it('no daemon answering is one line, exit 5', async () => {
    const r = await runCli(['build', 'push', '--image', 'game:v1', '--progress', 'none'], { env: isolatedEnv({ DOCKER_HOST: 'unix:///nonexistent/docker.sock' }) });
    expect(r.code).toBe(5);
    expect(r.stderr.split('\n').filter((l) => l.startsWith('error:'))).toEqual(['error: no Docker daemon answers at unix:///nonexistent/docker.sock (ENOENT): start one, or set DOCKER_HOST']);
  });

  it('the tag, when --tag is absent, comes from the image name', () => {
    expect(tagFromImage('game-server:v2')).toBe('game-server:v2');
    expect(tagFromImage('ghcr.io/studio/Game.Server:v1.4.2')).toBe('game-server:v1-4-2');
    expect(tagFromImage('localhost:5000/game')).toBe('game:latest');
    expect(tagFromImage('game@sha256:' + 'a'.repeat(64))).toBe('game:latest');
    expect(tagFromImage('sha256:' + 'a'.repeat(64))).toBeUndefined();
    expect(tagFromImage('0123456789ab')).toBeUndefined();
    expect(tagFromImage('...:---')).toBeUndefined();
  });

  it('.dockerignore: globs, a directory excluding what is under it, exceptions, last match wins', () => {
    const ignored = ignoreMatcher('# comment\n*.log\n/secret\nbuild/**\n**/tmp\n!keep.log\n');
    expect(['a.log', 'secret', 'secret/key', 'build/x/y', 'tmp', 'a/b/tmp', 'a/b/tmp/c'].filter((p) => !ignored(p))).toEqual([]);
    // `*` stays within one segment, as the docker CLI's matching does: src/a.log is not *.log.
    expect(['keep.log', 'src/a.log', 'secrets', 'Dockerfile', 'builder'].filter(ignored)).toEqual([]);
  });
});

describe.skipIf(!DOCKER_PRESENT)('build push --image and buildDockerfile, on a real daemon', { timeout: 120_000 }, () => {
  const docker = DOCKER as DockerEngine;
  const fx = useEmulator();
  const made: string[] = [];
  let context = '';

  beforeAll(() => {
    context = tempDir();
    fs.writeFileSync(path.join(context, 'hello.txt'), 'hello from scratch\n');
    fs.writeFileSync(path.join(context, 'secret.txt'), 'not for the image\n');
    fs.writeFileSync(path.join(context, '.dockerignore'), 'secret.txt\n');
    fs.writeFileSync(
      path.join(context, 'Dockerfile'),
      'FROM scratch\nARG GREETING\nARG RIVET_API_ENDPOINT\nLABEL greeting=$GREETING endpoint=$RIVET_API_ENDPOINT\nCOPY . /\n',
    );
  });

  afterAll(async () => {
    for (const image of [IMAGE, ...made]) await docker.removeImage(image).catch(() => {});
  });

  it('buildDockerfile builds a Dockerfile FROM scratch: its build args and RIVET_API_ENDPOINT reach it, .dockerignore is honoured', async () => {
    const lines: string[] = [];
    const id = await buildDockerfile({
      contextDir: context,
      buildArgs: { GREETING: 'hi' },
      tag: IMAGE,
      apiEndpoint: 'https://api.example.test',
      docker,
      onLine: (l) => lines.push(l),
    });
    expect(id).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(lines).toContain('Step 1/5 : FROM scratch');
    const inspect = await engineJson<{ Id: string; Config: { Labels: Record<string, string> } }>(`/images/${encodeURIComponent(IMAGE)}/json`);
    expect(inspect.Id).toBe(id);
    expect(inspect.Config.Labels).toEqual({ greeting: 'hi', endpoint: 'https://api.example.test' });
  });

  it('pushes the image straight from the daemon: a complete build whose bytes are its docker-archive', async () => {
    const r = await runBin(['build', 'push', '--image', IMAGE, '--tag', 'push-image:v1', '--json', '--progress', 'none'], { ...endpointEnv(fx.emu), ...dockerEnv() });
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout) as { build_id: string; bytes: number; sha256: string };
    const build = (await listBuilds(fx.emu.endpoint)).find((b) => b.build_id === result.build_id);
    expect(build).toMatchObject({ image_tag: 'push-image:v1', complete: true, sha256: result.sha256, content_length: result.bytes });

    // The same bytes `docker save` writes (an export of the same image is the same archive, byte for byte).
    const saved = path.join(tempDir(), 'saved.tar');
    await saveImage(IMAGE, saved);
    const stored = await storedBuild(fx.emu, result.build_id);
    expect(createHash('sha256').update(stored).digest('hex')).toBe(createHash('sha256').update(fs.readFileSync(saved)).digest('hex'));
    // A docker-archive: its manifest names the image, and the layer holds the file but not what .dockerignore kept out.
    const entries = new Map<string, Buffer>();
    await new Promise<void>((resolve, reject) => {
      const parser = new tar.Parser({ onReadEntry: (e) => {
        const chunks: Buffer[] = [];
        e.on('data', (c: Buffer) => chunks.push(c));
        e.on('end', () => entries.set(e.path, Buffer.concat(chunks)));
      } });
      parser.on('end', resolve);
      parser.on('error', reject);
      parser.end(stored);
    });
    const manifest = JSON.parse(entries.get('manifest.json')!.toString()) as { RepoTags: string[]; Layers: string[] }[];
    expect(manifest).toHaveLength(1);
    expect(manifest[0]!.RepoTags).toEqual([IMAGE]);
    const layerFiles: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const parser = new tar.Parser({ onReadEntry: (e) => (layerFiles.push(e.path), e.resume()) });
      parser.on('end', resolve);
      parser.on('error', reject);
      parser.end(entries.get(manifest[0]!.Layers[0]!)!);
    });
    expect(layerFiles).toContain('hello.txt');
    expect(layerFiles).not.toContain('secret.txt');
  });

  it('without --tag, the build is tagged from the image name', async () => {
    const r = await runBin(['build', 'push', '--image', IMAGE, '--json', '--progress', 'none'], { ...endpointEnv(fx.emu), ...dockerEnv() });
    expect(r.code, r.stderr).toBe(0);
    const build = (await listBuilds(fx.emu.endpoint)).find((b) => b.build_id === JSON.parse(r.stdout).build_id);
    expect(build?.image_tag).toBe(tagFromImage(IMAGE));
  });

  it('an image the daemon does not have is one line, exit 4', async () => {
    const r = await runBin(['build', 'push', '--image', `${IMAGE}-missing`, '--tag', 'push-image:missing', '--progress', 'none'], { ...endpointEnv(fx.emu), ...dockerEnv() });
    expect(r.code).toBe(4);
    expect(r.stderr.split('\n').filter((l) => l.startsWith('error:'))).toEqual([`error: no image '${IMAGE}-missing' in the local Docker daemon`]);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('a build arg named RIVET_* is refused before the daemon is asked', async () => {
    const err = await buildDockerfile({ contextDir: context, buildArgs: { RIVET_TOKEN: 'x' }, docker }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'UsageError', message: 'build arg RIVET_TOKEN: RIVET_* build args are reserved for the service' });
  });

  it('a Dockerfile that does not parse, or a step that fails, is one line with the daemon\'s words', async () => {
    const broken = tempDir();
    fs.writeFileSync(path.join(broken, 'Dockerfile'), 'FORM scratch\n');
    const parse = await buildDockerfile({ contextDir: broken, docker }).catch((e: unknown) => e);
    expect(parse).toMatchObject({ name: 'DockerError', exitCode: 1, message: `docker build of ${path.join(broken, 'Dockerfile')} failed: dockerfile parse error line 1: unknown instruction: FORM` });

    fs.writeFileSync(path.join(broken, 'Dockerfile'), 'FROM scratch\nCOPY missing.txt /\n');
    const step = (await buildDockerfile({ contextDir: broken, docker }).catch((e: unknown) => e)) as Error;
    expect(step.message).toMatch(/^docker build of .+ failed: COPY failed: .*missing\.txt.*$/);
    expect(step.message).not.toContain('\n');
  });
});
