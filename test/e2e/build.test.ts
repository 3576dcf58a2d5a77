import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, runCli, tempDir } from '../helpers/cli.js';
import { listBuilds, useEmulator } from '../helpers/emulator.js';

function writeRandom(file: string, size: number): string {
  const data = crypto.randomBytes(size);
  fs.writeFileSync(file, data);
  return crypto.createHash('sha256').update(data).digest('hex');
}

describe('build push', () => {
  // Small parts so a test file of a few hundred KiB is a real multipart upload.
  const fx = useEmulator({ partSize: 64 * 1024, singlePartMax: 32 * 1024 });
  const dir = tempDir();

  it('uploads every part and completes; --json prints the result; the emulator holds the same bytes', async () => {
    const file = path.join(dir, 'server.tar');
    const sha = writeRandom(file, 300 * 1024 + 17);
    const r = await runCli(['build', 'push', file, '--tag', 'game-server:v1', '--concurrency', '3', '--json'], { env: fx.env });
    expect(r.stderr).not.toContain('error');
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(Object.keys(result).sort()).toEqual(['build_id', 'bytes', 'bytes_sent', 'duration_ms', 'parts', 'sha256', 'upload_id']);
    expect(result).toMatchObject({ bytes: 300 * 1024 + 17, sha256: sha, parts: 5 });
    const build = (await listBuilds(fx.emu.endpoint)).find((b) => b.build_id === result.build_id);
    expect(build).toMatchObject({ image_tag: 'game-server:v1', complete: true, sha256: sha, content_length: 300 * 1024 + 17 });
  });

  it('a small file is one part; in a terminal the summary names tag, size and hash', async () => {
    const file = path.join(dir, 'small.tar');
    const sha = writeRandom(file, 1000);
    const r = await runCli(['build', 'push', file, '--tag', 'game-server:small', '--name', 'Small build'], { env: { ...fx.env, NO_COLOR: '1' }, tty: true });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('✓ Pushed game-server:small');
    expect(r.stdout).toMatch(/Size\s+1000 B in 1 part\n/);
    expect(r.stdout).toContain(sha);
  });

  it('the embedded emulator takes a push with no flags at all', async () => {
    const file = path.join(dir, 'embedded.tar');
    const sha = writeRandom(file, 4096);
    const r = await runCli(['build', 'push', file, '--tag', 'embedded:v1', '--json'], { env: isolatedEnv() });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).sha256).toBe(sha);
  });

  it('a reused tag is refused by the service', async () => {
    const file = path.join(dir, 'dup.tar');
    writeRandom(file, 100);
    expect((await runCli(['build', 'push', file, '--tag', 'dup:v1'], { env: fx.env })).code).toBe(0);
    const again = await runCli(['build', 'push', file, '--tag', 'dup:v1'], { env: fx.env });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^error: .*\(.+, ray .+\)$/m);
  });

  it.each([
    [['missing.tar', '--tag', 'a:b'], /^error: missing.tar: no such file\n$/],
    [['.', '--tag', 'a:b'], /^error: \.: a directory with neither manifest.json \(docker_image\) nor config.json and rootfs\/ \(oci_bundle\)/],
    [['empty.tar', '--tag', 'a:b'], /the file is empty/],
    [['ok.tar'], /--tag is required/],
    [['ok.tar', '--tag', 'noversion'], /--tag must be name:tag/],
    [['ok.tar', '--tag', 'Game:V1'], /--tag must be name:tag/],
    [['ok.tar', '--tag', '-a:b'], /--tag must be name:tag/],
    [['ok.tar', '--tag', 'a:b', '--concurrency', '0'], /--concurrency must be from 1 to 64, not 0/],
    [['ok.tar', '--tag', 'a:b', '--concurrency', '65'], /--concurrency must be from 1 to 64, not 65/],
    [['ok.tar', '--tag', 'a:b', '--concurrency', '2.5'], /--concurrency must be a whole number/],
    [['ok.tar', '--tag', 'a:b', '--kind', 'zip'], /argument 'zip' is invalid/],
    [['ok.tar', '--tag', 'a:b', '--name', ' padded'], /--name must not start or end with spaces/],
  ])('refuses %j with exit 2 and one line', async (args, message) => {
    fs.writeFileSync(path.join(dir, 'empty.tar'), '');
    fs.writeFileSync(path.join(dir, 'ok.tar'), 'data');
    const r = await runCli(['build', 'push', ...(args as string[])], { env: fx.env, cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
  });
});
