// build push under the conditions CI runners meet: faults, kills, signals, files that change, every input form.
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import readline from 'node:readline';
import { describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { isolatedEnv, plain, runCli, tempDir } from '../helpers/cli.js';
import { endpointEnv, frontOf, listBuilds, startTestEmulator, storedBuild, useEmulator } from '../helpers/emulator.js';
import { BIN } from '../helpers/bin.js';

const PART = 64 * 1024;
const PATIENT = { attempts: 8, baseMs: 1, maxMs: 5 };
const lz4 = createRequire(import.meta.url)('lz4-napi') as { decompressFrameSync(b: Buffer): Buffer; compressFrameSync(b: Buffer): Buffer };

function writeRandom(file: string, size: number): string {
  const data = crypto.randomBytes(size);
  fs.writeFileSync(file, data);
  return sha(data);
}
const sha = (b: Buffer | string) => crypto.createHash('sha256').update(b).digest('hex');

function events(stderr: string): Record<string, any>[] {
  return stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
}

/** Runs the real executable and resolves once `ready(events so far)` says so; returns the child. */
function spawnPush(args: string[], env: Record<string, string | undefined>, ready: (parts: number) => boolean): Promise<{ child: ChildProcess; exit: Promise<number | null>; stderr: () => string }> {
  const child = spawn(process.execPath, [BIN, 'build', 'push', ...args, '--progress', 'json'], {
    env: { PATH: process.env.PATH, ...env } as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))));
  return new Promise((resolve, reject) => {
    let parts = 0;
    readline.createInterface({ input: child.stderr! }).on('line', (line) => {
      err += line + '\n';
      if (line.startsWith('{') && JSON.parse(line).type === 'part') parts++;
      if (ready(parts)) resolve({ child, exit, stderr: () => err });
    });
    exit.then((code) => reject(new Error(`exited ${code} before ready: ${err}`)));
  });
}

describe('build push: robustness', () => {
  const fx = useEmulator({ partSize: PART, singlePartMax: 32 * 1024 });
  const dir = tempDir();

  it('ends byte-exact through injected 500s and connection resets, retrying each failed part', async () => {
    const e = { ...isolatedEnv({ GAMEHOST_EMULATOR_FAULTS: 'put-error=0.25,put-reset=0.15,seed=11' }, { partSize: PART, singlePartMax: 32 * 1024, startDelayMs: 0, readyDelayMs: 0 }) };
    const file = path.join(dir, 'faulty.tar');
    const digest = writeRandom(file, 20 * PART + 123);
    const r = await runCli(['build', 'push', file, '--tag', 'faulty:v1', '--concurrency', '4', '--json', '--progress', 'json'], { env: e, retry: PATIENT });
    expect(r.code).toBe(0);
    const retries = events(r.stderr).filter((ev) => ev.type === 'retry');
    expect(retries.length).toBeGreaterThan(0);
    const reasons = retries.map((ev) => ev.error).join('\n');
    expect(reasons).toContain('HTTP 500 ERROR');
    expect(reasons).toMatch(/connection reset|closed unexpectedly/i);
    const result = JSON.parse(r.stdout);
    expect(result).toMatchObject({ sha256: digest, parts: 21 });
    // The emulator hashed what it assembled: the same bytes arrived.
    const listed = await runCli(['emulator', 'builds', '--json'], { env: e });
    const build = (JSON.parse(listed.stdout).builds as { build_id: string }[]).find((b) => b.build_id === result.build_id);
    expect(build).toMatchObject({ complete: true, sha256: digest });
  });

  it('a run killed with SIGKILL is finished by the next run, which sends only the missing parts', async () => {
    const slow = await startTestEmulator({ partSize: PART, singlePartMax: 32 * 1024 });
    const slowEnv = { ...isolatedEnv({ GAMEHOST_EMULATOR_FAULTS: 'latency=60ms' }), ...endpointEnv(slow) };
    try {
      const file = path.join(dir, 'killed.tar');
      const digest = writeRandom(file, 24 * PART);
      const first = await spawnPush([file, '--tag', 'killed:v1', '--concurrency', '1'], slowEnv, (parts) => parts >= 5);
      first.child.kill('SIGKILL');
      await first.exit;
      const doneBefore = events(first.stderr()).filter((e) => e.type === 'part').length;

      const second = await runCli(['build', 'push', file, '--tag', 'killed:v1', '--json', '--progress', 'json'], { env: slowEnv });
      expect(second.code).toBe(0);
      const ev = events(second.stderr);
      const start = ev.find((e) => e.type === 'start')!;
      expect(start.resumed_parts).toBeGreaterThanOrEqual(doneBefore);
      const sent = ev.filter((e) => e.type === 'part').length;
      expect(sent + start.resumed_parts).toBe(24);
      expect(sent).toBeLessThan(24);
      expect(ev.find((e) => e.type === 'resume')).toMatchObject({ parts: 24, done_parts: start.resumed_parts });
      // Under --progress json every line on stderr is one JSON object, notices included.
      expect(second.stderr.trim().split('\n').every((l) => l.startsWith('{'))).toBe(true);
      expect(JSON.parse(second.stdout).sha256).toBe(digest);
      // Throughput is this run's bytes only: what the first run sent is not counted again.
      expect(JSON.parse(second.stdout).bytes_sent).toBe(sent * PART);
      const builds = (await listBuilds(slow.endpoint)).filter((b) => b.image_tag === 'killed:v1');
      expect(builds).toHaveLength(1);
      expect(builds[0]).toMatchObject({ complete: true, sha256: digest });
      // The journal is gone after completion: a third run starts a new build (and meets the taken tag).
      const third = await runCli(['build', 'push', file, '--tag', 'killed:v1'], { env: slowEnv });
      expect(third.stderr).toContain('BUILD_TAG_TAKEN');
    } finally {
      await slow.close();
    }
  });

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('%s aborts every part, never completes, says how to resume, exits %i', async (signal, code) => {
    const slow = await startTestEmulator({ partSize: PART, singlePartMax: 32 * 1024 });
    const slowEnv = { ...isolatedEnv({ GAMEHOST_EMULATOR_FAULTS: 'latency=60ms' }), ...endpointEnv(slow) };
    try {
      const file = path.join(dir, `${signal}.tar`);
      writeRandom(file, 16 * PART);
      const run = await spawnPush([file, '--tag', `sig:${signal.toLowerCase()}`, '--concurrency', '2'], slowEnv, (parts) => parts >= 2);
      run.child.kill(signal);
      expect(await run.exit).toBe(code);
      expect(run.stderr()).toMatch(/run the same command again to resume: \d+ of 16 parts are up/);
      const build = (await listBuilds(slow.endpoint)).find((b) => b.image_tag === `sig:${signal.toLowerCase()}`);
      expect(build?.complete).toBe(false);
    } finally {
      await slow.close();
    }
  });

  it('against the embedded emulator an interrupted push resumes in the next process-like run', async () => {
    const e = isolatedEnv({ GAMEHOST_EMULATOR_FAULTS: 'latency=40ms' }, { partSize: PART, singlePartMax: 32 * 1024, startDelayMs: 0, readyDelayMs: 0 });
    const file = path.join(dir, 'embedded-resume.tar');
    const digest = writeRandom(file, 12 * PART);
    const controller = new AbortController();
    const { InterruptedError } = await import('../../src/errors.js');
    let parts = 0;
    // Started before the run, so the run's check for left-over timers does not count it.
    const watcher = setInterval(async () => {
      const journals = path.join(e.XDG_STATE_HOME!, 'gamehost', 'uploads');
      if (!fs.existsSync(journals)) return;
      parts = fs.readdirSync(journals).map((f) => fs.readFileSync(path.join(journals, f), 'utf8').split('\n').length - 2).reduce((a, b) => a + b, 0);
      if (parts >= 3) controller.abort(new InterruptedError('SIGINT'));
    }, 20);
    const first = runCli(['build', 'push', file, '--tag', 'emb:v1', '--concurrency', '1', '--progress', 'json'], { env: e, signal: controller.signal });
    const r1 = await first;
    clearInterval(watcher);
    expect(r1.code).toBe(130);
    expect(r1.stderr).toMatch(/run the same command again to resume: \d+ of 12 parts are up/);

    const r2 = await runCli(['build', 'push', file, '--tag', 'emb:v1', '--json', '--progress', 'json'], { env: e });
    expect(r2.code).toBe(0);
    const start = events(r2.stderr).find((ev) => ev.type === 'start')!;
    expect(start.resumed_parts).toBeGreaterThanOrEqual(3);
    expect(events(r2.stderr).filter((ev) => ev.type === 'part')).toHaveLength(12 - start.resumed_parts);
    expect(JSON.parse(r2.stdout).sha256).toBe(digest);
  });

  it('a file that changes during the upload fails with exit 7 and no completion', async () => {
    const file = path.join(dir, 'changing.tar');
    writeRandom(file, 8 * PART);
    // The file changes as its first part arrives, so the change falls inside the upload however fast it runs.
    let changed = false;
    const front = await frontOf(fx.emu.endpoint, (req) => {
      if (req.method === 'PUT' && !changed) fs.appendFileSync(file, 'more');
      changed ||= req.method === 'PUT';
      return false;
    });
    const r = await runCli(['build', 'push', file, '--tag', 'changing:v1'], { env: { ...fx.env, GAMEHOST_ENDPOINT: front.endpoint } }).finally(front.close);
    expect(changed).toBe(true);
    expect(r.code).toBe(7);
    expect(r.stderr).toMatch(/^error: .*changing\.tar changed during the upload; the build was not completed$/m);
    const build = (await listBuilds(fx.emu.endpoint)).find((b) => b.image_tag === 'changing:v1');
    expect(build?.complete).toBe(false);
  });

  it('--progress json: create, start, part, completing, complete events on stderr, one JSON object a line; stdout keeps the result', async () => {
    const file = path.join(dir, 'events.tar');
    writeRandom(file, 3 * PART);
    const r = await runCli(['build', 'push', file, '--tag', 'events:v1', '--progress', 'json', '--json'], { env: fx.env });
    const lines = r.stderr.trim().split('\n');
    expect(lines.map((l) => JSON.parse(l).type).filter((t) => t !== 'progress')).toEqual(['create', 'start', 'part', 'part', 'part', 'completing', 'complete']);
    const ev = events(r.stderr);
    expect(ev[0]).toMatchObject({ type: 'create', tag: 'events:v1' });
    expect(ev[1]).toMatchObject({ type: 'start', bytes: 3 * PART, parts: 3, resumed_parts: 0 });
    expect(ev.filter((e) => e.type === 'part').map((e) => e.part).sort()).toEqual([1, 2, 3]);
    expect(ev.at(-1)).toMatchObject({ type: 'complete', build_id: JSON.parse(r.stdout).build_id, bytes: 3 * PART });
  });

  it('without a terminal: a plain line at each part; in a terminal: a live progress line', async () => {
    const file = path.join(dir, 'shown.tar');
    writeRandom(file, 3 * PART);
    const piped = await runCli(['build', 'push', file, '--tag', 'shown:v1'], { env: fx.env });
    expect(piped.stderr).toMatch(/^Creating build shown:v1…$/m);
    expect(piped.stderr).toMatch(/^part [123] done \(1\/3 complete\)$/m);
    expect(piped.stderr).toMatch(/^part [123] done \(3\/3 complete\)\nuploading 100\.0% \(192 KiB of 192 KiB\) at .+\/s.*, 3\/3 parts\ncompleting the upload…$/m);
    const tty = await runCli(['build', 'push', file, '--tag', 'shown:v2'], { env: fx.env, tty: true });
    expect(tty.code).toBe(0);
    // The phases on the live line: creating, uploading, completing.
    expect(plain(tty.stderr)).toMatch(/Creating build shown:v2…[^]*uploading 0\.0% \(0 B of 192 KiB\)[^]*completing the upload…/);
    expect(tty.stderr).not.toMatch(/^part \d/m);
    const quiet = await runCli(['build', 'push', file, '--tag', 'shown:v3', '--quiet'], { env: fx.env });
    expect(quiet.stderr).toBe('');
  });

  it('429 with Retry-After in seconds and as an HTTP-date: build creation waits and is sent again', async () => {
    for (const form of ['seconds', 'date'] as const) {
      const times: number[] = [];
      // A front that rate-limits the first build creation, then passes everything to the emulator.
      const front = await frontOf(fx.emu.endpoint, (req, res) => {
        if (req.method !== 'POST' || !req.url?.endsWith('/builds')) return false;
        times.push(Date.now());
        if (times.length > 1) return false;
        const when = form === 'seconds' ? '1' : new Date(Math.ceil((Date.now() + 1000) / 1000) * 1000).toUTCString();
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': when });
        res.end(JSON.stringify({ code: 'API_RATE_LIMIT', message: 'slow down', ray_id: 'r' }));
        req.resume();
        return true;
      });
      try {
        const file = path.join(dir, `ratelimited-${form}.tar`);
        const digest = writeRandom(file, 2 * PART);
        const r = await runCli(['build', 'push', file, '--tag', `limited:${form}`, '--json'], { env: { ...fx.env, GAMEHOST_ENDPOINT: front.endpoint } });
        expect(r.code).toBe(0);
        expect(JSON.parse(r.stdout).sha256).toBe(digest);
        expect(times).toHaveLength(2);
        expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(form === 'seconds' ? 950 : 1);
      } finally {
        front.close();
      }
    }
  });
});

describe('build push: stalls and clean-up', () => {
  const fx = useEmulator({ partSize: PART, singlePartMax: 32 * 1024 });
  const dir = tempDir();

  it('a part whose connection stalls is retried after --stall-timeout, then fails with exit 7', async () => {
    // A front that passes the API through but swallows part uploads without ever answering: a hung link.
    const hung: http.ServerResponse[] = [];
    const front = await frontOf(fx.emu.endpoint, (req, res) => {
      if (req.method !== 'PUT') return false;
      req.resume();
      hung.push(res);
      return true;
    });
    try {
      const file = path.join(dir, 'stalled.tar');
      writeRandom(file, PART);
      const started = Date.now();
      const r = await runCli(['build', 'push', file, '--tag', 'stalled:v1', '--stall-timeout', '1', '--progress', 'json'], {
        env: { ...fx.env, GAMEHOST_ENDPOINT: front.endpoint },
        retry: { attempts: 2, baseMs: 1, maxMs: 2 },
      });
      expect(r.code).toBe(7);
      expect(events(r.stderr).at(-1)).toMatchObject({
        type: 'error',
        exit_code: 7,
        message: expect.stringMatching(/^part 1 of 1 failed after 2 attempts: the connection to 127\.0\.0\.1:\d+ stalled: no bytes moved for 1 s$/),
        hint: 'run the same command again to resume: 0 of 1 parts are up',
      });
      expect(events(r.stderr).filter((e) => e.type === 'retry')).toHaveLength(1);
      expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    } finally {
      hung.forEach((res) => res.destroy());
      front.close();
    }
  });

  it('temporary files are removed when the push fails and when it succeeds', async () => {
    const tmp = tempDir();
    const d = path.join(dir, 'bundle');
    fs.mkdirSync(path.join(d, 'rootfs'), { recursive: true });
    fs.writeFileSync(path.join(d, 'config.json'), '{}');
    fs.writeFileSync(path.join(d, 'rootfs', 'server'), crypto.randomBytes(50_000));
    const denied = await runCli(['build', 'push', d, '--tag', 'tmp:v1', '--compression', 'lz4'], { env: { ...fx.env, TMPDIR: tmp, GAMEHOST_TOKEN: 'cloud.bad.token' } });
    expect(denied.code).toBe(3);
    expect(fs.readdirSync(tmp)).toEqual([]);
    const ok = await runCli(['build', 'push', d, '--tag', 'tmp:v2', '--compression', 'lz4'], { env: { ...fx.env, TMPDIR: tmp } });
    expect(ok.code).toBe(0);
    expect(fs.readdirSync(tmp)).toEqual([]);
  });
});

describe('build push: inputs', () => {
  const fx = useEmulator({ partSize: PART, singlePartMax: 32 * 1024 });
  const dir = tempDir();

  const stored = (buildId: string) => storedBuild(fx.emu, buildId);

  it('--progress json: the notices of packing and of the embedded emulator are JSON events too, so every stderr line parses', async () => {
    const d = path.join(dir, 'docker-json');
    fs.mkdirSync(d, { recursive: true });
    fs.writeFileSync(path.join(d, 'manifest.json'), '[]');
    fs.writeFileSync(path.join(d, 'layer.tar'), crypto.randomBytes(50_000));
    const e = isolatedEnv({}, { partSize: PART, singlePartMax: 32 * 1024 });
    const r = await runCli(['build', 'push', d, '--tag', 'dir:json', '--progress', 'json', '--json'], { env: e });
    expect(r.code).toBe(0);
    const lines = r.stderr.trim().split('\n');
    const parsed = lines.map((l) => JSON.parse(l) as { type: string; message?: string });
    // The embedded emulator's notice is for people: never under --json.
    expect(parsed.filter((ev) => ev.type === 'notice').map((ev) => ev.message)).toEqual([expect.stringMatching(/^Packing .*docker-json into a tar…$/)]);
    expect(parsed.map((ev) => ev.type)).toContain('complete');
  });

  it('a docker save directory is packed into a tar and pushed as docker_image', async () => {
    const d = path.join(dir, 'docker');
    fs.mkdirSync(path.join(d, 'layer'), { recursive: true });
    fs.writeFileSync(path.join(d, 'manifest.json'), '[]');
    fs.writeFileSync(path.join(d, 'layer', 'layer.tar'), crypto.randomBytes(100_000));
    const r = await runCli(['build', 'push', d, '--tag', 'dir:docker', '--json'], { env: fx.env });
    expect(r.code).toBe(0);
    const build = (await listBuilds(fx.emu.endpoint)).find((b) => b.image_tag === 'dir:docker') as any;
    expect(build.kind).toBe('docker_image');
    const tarBytes = await stored(JSON.parse(r.stdout).build_id);
    expect(tarBytes.includes(Buffer.from('manifest.json'))).toBe(true);
    expect(fs.readdirSync(path.dirname(d)).filter((f) => f.startsWith('gamehost-'))).toEqual([]);
  });

  it('an OCI bundle directory is detected as oci_bundle', async () => {
    const d = path.join(dir, 'oci');
    fs.mkdirSync(path.join(d, 'rootfs', 'bin'), { recursive: true });
    fs.writeFileSync(path.join(d, 'config.json'), '{}');
    fs.writeFileSync(path.join(d, 'rootfs', 'bin', 'server'), 'x');
    const r = await runCli(['build', 'push', d, '--tag', 'dir:oci', '--json'], { env: fx.env });
    expect(r.code).toBe(0);
    const build = (await listBuilds(fx.emu.endpoint)).find((b) => b.image_tag === 'dir:oci') as any;
    expect(build.kind).toBe('oci_bundle');
  });

  it('- reads the build from standard input', async () => {
    const data = crypto.randomBytes(5 * PART + 7);
    const r = await runCli(['build', 'push', '-', '--tag', 'stdin:v1', '--json'], { env: fx.env, stdin: data });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ sha256: sha(data), bytes: data.length });
  });

  it('--compression lz4 uploads one LZ4 frame that decompresses to the file', async () => {
    const file = path.join(dir, 'big.tar');
    const data = Buffer.concat([crypto.randomBytes(50_000), Buffer.alloc(400_000, 7)]);
    fs.writeFileSync(file, data);
    const r = await runCli(['build', 'push', file, '--tag', 'lz4:v1', '--compression', 'lz4', '--json'], { env: fx.env });
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.bytes).toBeLessThan(data.length);
    const build = (await listBuilds(fx.emu.endpoint)).find((b) => b.image_tag === 'lz4:v1') as any;
    expect(build.compression).toBe('lz4');
    expect(lz4.decompressFrameSync(await stored(result.build_id)).equals(data)).toBe(true);
    // The hash is of what was sent: the frame, not the file (the hash begun on the file as the push started is dropped).
    expect(result.sha256).toBe(sha(await stored(result.build_id)));
    expect(result.sha256).not.toBe(sha(data));
  });

  it('a file that is already LZ4 is sent as it is, marked lz4', async () => {
    const file = path.join(dir, 'pre.lz4');
    const packed = lz4.compressFrameSync(Buffer.alloc(100_000, 3));
    fs.writeFileSync(file, packed);
    const r = await runCli(['build', 'push', file, '--tag', 'lz4:pre', '--json'], { env: fx.env });
    expect(JSON.parse(r.stdout).sha256).toBe(sha(packed));
    const build = (await listBuilds(fx.emu.endpoint)).find((b) => b.image_tag === 'lz4:pre') as any;
    expect(build.compression).toBe('lz4');
  });

  it('--dry-run prints kind, compression, size, hash and parts, and sends nothing', async () => {
    const file = path.join(dir, 'dry.tar');
    const digest = writeRandom(file, 6 * 1024 * 1024);
    const r = await runCli(['build', 'push', file, '--tag', 'dry:v1', '--dry-run', '--json'], { env: { ...fx.env, GAMEHOST_ENDPOINT: 'http://127.0.0.1:9' } });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ dry_run: true, kind: 'docker_image', compression: 'none', bytes: 6 * 1024 * 1024, sha256: digest, parts: 1, part_size: 6 * 1024 * 1024 });
    const big = path.join(dir, 'dry-big.tar');
    fs.closeSync(fs.openSync(big, 'w'));
    fs.truncateSync(big, 250 * 1024 * 1024);
    const many = await runCli(['build', 'push', big, '--tag', 'dry:v2', '--dry-run'], { env: { ...fx.env, GAMEHOST_ENDPOINT: 'http://127.0.0.1:9' } });
    expect(many.stdout).toMatch(/^parts\t3$/m);
    fs.rmSync(big);
  });

  it.each([
    [['huge.tar', '--tag', 'a:b'], /^error: huge\.tar: 7\.45 GiB \(8,000,000,000 bytes\) is over the service's limit: a build must be below 7\.45 GiB \(8,000,000,000 bytes\)\n$/],
    [['huger.tar', '--tag', 'a:b'], /^error: huger\.tar: 7\.50 GiB \(8,053,063,680 bytes\) is over the service's limit: a build must be below 7\.45 GiB \(8,000,000,000 bytes\)\n$/],
    [['ok.tar', '--tag', 'a:b', '--limit-rate', 'fast'], /--limit-rate must be bytes per second/],
    [['ok.tar', '--tag', 'a:b', '--stall-timeout', '0'], /--stall-timeout must be at least 1/],
    [['ok.tar', '--tag', 'a:b', '--progress', 'fancy'], /argument 'fancy' is invalid/],
    [['-', '--tag', 'a:b'], /the build is empty/],
  ])('refuses %j with exit 2 before any request', async (args, message) => {
    const huge = path.join(dir, 'huge.tar');
    fs.closeSync(fs.openSync(huge, 'w'));
    fs.truncateSync(huge, 8_000_000_000); // sparse: no disk used
    const huger = path.join(dir, 'huger.tar');
    fs.closeSync(fs.openSync(huger, 'w'));
    fs.truncateSync(huger, 7.5 * 1024 ** 3);
    fs.writeFileSync(path.join(dir, 'ok.tar'), 'data');
    const r = await runCli(['build', 'push', ...(args as string[])], { env: { ...fx.env, GAMEHOST_ENDPOINT: 'http://127.0.0.1:9' }, cwd: dir });
    fs.rmSync(huge);
    fs.rmSync(huger);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
  });
});
