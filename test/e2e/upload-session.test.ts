// build push as one session: what happens at its edges (a refused completion, S3's XML errors, plans that cannot
// work, --limit-rate, GitHub Actions outputs), and the transport rules it shares with history export.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { plain, runCli, tempDir } from '../helpers/cli.js';
import { frontOf, listBuilds, useEmulator } from '../helpers/emulator.js';
import { BIN } from '../helpers/bin.js';

const PART = 64 * 1024;
const S3_EXPIRED = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Request has expired</Message><X-Amz-Expires>21600</X-Amz-Expires><RequestId>4D2C9F1B</RequestId></Error>';

const events = (stderr: string): Record<string, any>[] => stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
const journals = (env: Record<string, string | undefined>) => {
  const dir = path.join(env.XDG_STATE_HOME!, 'gamehost', 'uploads');
  return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
};
/** The part number of a presigned part URL of the emulator (`/_upload/{upload}/{n}?…`). */
const partOf = (req: http.IncomingMessage) => (req.method === 'PUT' ? Number(/\/_upload\/[^/]+\/(\d+)/.exec(req.url ?? '')?.[1]) : undefined);

function refuse(res: http.ServerResponse, req: http.IncomingMessage, status: number, body: string, type = 'application/json'): true {
  req.resume();
  res.writeHead(status, { 'content-type': type, connection: 'close' });
  res.end(body);
  return true;
}

describe('build push: the session ends cleanly on every path', () => {
  const fx = useEmulator({ partSize: PART, singlePartMax: 32 * 1024 });
  const dir = tempDir();
  const file = (name: string, size: number) => {
    const f = path.join(dir, name);
    fs.writeFileSync(f, crypto.randomBytes(size));
    return f;
  };
  const refusingComplete = () =>
    frontOf(fx.emu.endpoint, (req, res) =>
      req.method === 'POST' && req.url!.endsWith('/complete')
        ? refuse(res, req, 400, JSON.stringify({ code: 'UPLOAD_INVALID', message: 'Invalid upload: part 2 of 3 is missing.', ray_id: 'r1' }))
        : false,
    );

  it('a completion refused with 400 on a terminal: exit 1, nothing left running, no journal, no resume hint', async () => {
    const front = await refusingComplete();
    try {
      const env = { ...fx.env, XDG_STATE_HOME: path.join(tempDir(), 'state'), GAMEHOST_ENDPOINT: front.endpoint };
      const f = file('refused.tar', 3 * PART);
      // runCli fails the test if the spinner's timer (or anything else) outlives the run: the 40 s hang.
      const r = await runCli(['build', 'push', f, '--tag', 'refused:v1'], { env, tty: true });
      expect(r.code).toBe(1);
      // eslint-disable-next-line no-control-regex
      const text = r.stderr.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
      expect(text).toContain('completing the upload…');
      expect(text).toContain(
        'error: Invalid upload: part 2 of 3 is missing. (UPLOAD_INVALID, ray r1)\n  this upload cannot be resumed: push the build again; the unfinished build may still hold refused:v1, so the next push may need a new tag (--tag refused:<new-tag>)\n',
      );
      expect(text).not.toContain('to resume');
      expect(journals(env)).toEqual([]);
    } finally {
      front.close();
    }
  });

  // script(1) with these flags is util-linux's; the in-process test above covers the same on every platform.
  it.runIf(process.platform === 'linux')('the real executable on a pseudo-terminal exits on its own after a refused completion', async () => {
    const front = await refusingComplete();
    try {
      const env = { ...fx.env, XDG_STATE_HOME: path.join(tempDir(), 'state'), GAMEHOST_ENDPOINT: front.endpoint };
      const f = file('refused-pty.tar', 3 * PART);
      const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
      // util-linux script(1) gives the child a real terminal; the test's own timeout is what a hang would hit.
      // A terminal 100 columns wide (under a harness script's terminal has no size at all).
      const command = `stty cols 100; exec ${[process.execPath, BIN, 'build', 'push', f, '--tag', 'refused:pty'].map(quote).join(' ')}`;
      const child = spawn('script', ['-qec', command, '/dev/null'], {
        env: { PATH: process.env.PATH, SHELL: '/bin/sh', TERM: 'xterm-256color', ...env } as NodeJS.ProcessEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code).toBe(1);
      expect(plain(out)).toContain('error: Invalid upload: part 2 of 3 is missing.');
      expect(plain(out)).toContain('completing the upload…');
      expect(out.length).toBeLessThan(64 * 1024);
    } finally {
      front.close();
    }
  });

  it('S3 403 XML on a resumed part: the code and message read, the part named in the whole upload, the journal removed', async () => {
    let mode: 'fail-500' | 'expired' | 'none' = 'fail-500';
    const front = await frontOf(fx.emu.endpoint, (req, res) => {
      if (partOf(req) !== 6 || mode === 'none') return false;
      if (mode === 'fail-500') return refuse(res, req, 500, JSON.stringify({ code: 'ERROR', message: 'try later' }));
      return refuse(res, req, 403, S3_EXPIRED, 'application/xml');
    });
    try {
      const env = { ...fx.env, XDG_STATE_HOME: path.join(tempDir(), 'state'), GAMEHOST_ENDPOINT: front.endpoint };
      const f = file('expired.tar', 6 * PART);
      const args = ['build', 'push', f, '--tag', 'expired:v1', '--concurrency', '1'];
      // A 5xx after its retries: resuming can help, and says so.
      const first = await runCli(args, { env });
      expect(first.code).toBe(7);
      expect(first.stderr).toMatch(/^error: part 6 of 6 failed after 3 attempts: 500 ERROR: try later\n  run the same command again to resume: 5 of 6 parts are up\n$/m);
      expect(journals(env)).toHaveLength(1);

      // The resumed run sends part 6 alone and meets an expired URL: named as part 6 of 6, read from the XML.
      mode = 'expired';
      const second = await runCli(args, { env });
      expect(second.code).toBe(7);
      expect(second.stderr).toContain('Resuming build');
      expect(second.stderr).toMatch(
        /^error: part 6 of 6 failed: 403 AccessDenied: Request has expired\n  this upload cannot be resumed: push the build again; the unfinished build may still hold expired:v1, so the next push may need a new tag \(--tag expired:<new-tag>\)\n$/m,
      );
      expect(second.stderr).not.toMatch(/<Error>|gamehost login|to resume/);
      expect(journals(env)).toEqual([]);

      // So the next run starts over: a new build, no resume; the unfinished build holds the tag, as the hint said.
      mode = 'none';
      const third = await runCli([...args, '--progress', 'json'], { env });
      expect(third.code).toBe(1);
      expect(events(third.stderr)[0]).toMatchObject({ type: 'create', tag: 'expired:v1' });
      expect(events(third.stderr).some((e) => e.type === 'resume')).toBe(false);
      expect(events(third.stderr).at(-1)).toMatchObject({
        type: 'error',
        message: 'Image tag "expired:v1" is already used by another build of this game.',
        code: 'BUILD_TAG_TAKEN',
        status: 400,
        hint: 'tags are unique per game, and an unfinished push holds its tag too: push with a new one (--tag expired:<new-tag>)',
      });
      // The fix the hint names works.
      const fourth = await runCli(['build', 'push', f, '--tag', 'expired:v2', '--json'], { env });
      expect(fourth.code).toBe(0);
      expect(JSON.parse(fourth.stdout).parts).toBe(6);
    } finally {
      front.close();
    }
  });

  it("the emulator's presign error (a bad signature) ends the upload and its journal, naming the part", async () => {
    const front = await frontOf(fx.emu.endpoint, (req) => {
      if (partOf(req) === 2) req.url = req.url!.replace(/sig=[^&]+/, 'sig=forged');
      return false;
    });
    try {
      const env = { ...fx.env, XDG_STATE_HOME: path.join(tempDir(), 'state'), GAMEHOST_ENDPOINT: front.endpoint };
      const args = ['build', 'push', file('forged.tar', 3 * PART), '--tag', 'forged:v1', '--concurrency', '1'];
      const r = await runCli(args, { env });
      expect(r.code).toBe(7);
      expect(r.stderr).toMatch(
        /^error: part 2 of 3 failed: 403 PRESIGN_INVALID: The presigned URL signature does not match\.( \(ray [\w-]+\))?\n  this upload cannot be resumed: push the build again; the unfinished build may still hold forged:v1, so the next push may need a new tag \(--tag forged:<new-tag>\)\n$/m,
      );
      expect(journals(env)).toEqual([]);
      // Pushed again as it was: the unfinished build holds the tag, and the error names the fix (no docs link: the
      // code is the emulator's own, the service's error pages do not have it).
      const again = await runCli(args, { env: { ...env, GAMEHOST_ENDPOINT: fx.emu.endpoint } });
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(
        /^error: Image tag "forged:v1" is already used by another build of this game\. \(BUILD_TAG_TAKEN, ray [\w-]+\)\n  tags are unique per game, and an unfinished push holds its tag too: push with a new one \(--tag forged:<new-tag>\)\n$/m,
      );
    } finally {
      front.close();
    }
  });

  const plan = (url: (n: number) => string, layout: [number, number][]) => ({
    build_id: '11111111-1111-4111-8111-111111111111',
    upload_id: '22222222-2222-4222-8222-222222222222',
    image_presigned_requests: layout.map(([byte_offset, content_length], i) => ({ path: 'image.tar', url: url(i + 1), byte_offset, content_length })),
  });
  it.each([
    ['a gap', plan((n) => `http://127.0.0.1:9/p/${n}`, [[0, PART], [PART + 1, PART - 1]]), /part 2 starts at byte 65537, expected 65536$/m],
    ['a short plan', plan((n) => `http://127.0.0.1:9/p/${n}`, [[0, PART]]), /its parts cover 65536 bytes but the file has 131072$/m],
    ['a relative part URL', plan(() => 'part-1', [[0, 2 * PART]]), /part 1 url is not an absolute http\(s\) URL: "part-1"$/m],
    ['an ftp part URL', plan(() => 'ftp://bucket/part', [[0, 2 * PART]]), /part 1 url is not an absolute http\(s\) URL: "ftp:\/\/bucket\/part"$/m],
    ['10,001 parts', plan((n) => `http://127.0.0.1:9/p/${n}`, Array.from({ length: 10_001 }, (_, i) => [i, 1] as [number, number])), /10001 parts, more than 10000$/m],
  ])('a plan with %s is refused before anything is journalled or sent: exit 7', async (_name, body, message) => {
    let puts = 0;
    const front = await frontOf(fx.emu.endpoint, (req, res) => {
      if (req.method === 'PUT') puts++;
      return req.method === 'POST' && req.url!.endsWith('/builds') ? refuse(res, req, 200, JSON.stringify(body)) : false;
    });
    try {
      const env = { ...fx.env, XDG_STATE_HOME: path.join(tempDir(), 'state'), GAMEHOST_ENDPOINT: front.endpoint };
      const r = await runCli(['build', 'push', file('planned.tar', 2 * PART), '--tag', 'plan:v1'], { env });
      expect(r.code).toBe(7);
      expect(r.stderr).toMatch(/^error: the service's upload plan is unusable: /m);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toContain('again');
      expect(journals(env)).toEqual([]);
      expect(puts).toBe(0);
    } finally {
      front.close();
    }
  });

  it('a completion already in progress (429 UPLOAD_COMPLETE_IN_PROGRESS): said once, waited for as told, no retry lines, then done', async () => {
    let busy = 2;
    const front = await frontOf(fx.emu.endpoint, (req, res) => {
      if (!(req.method === 'POST' && req.url!.endsWith('/complete')) || busy-- <= 0) return false;
      req.resume();
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
      res.end(JSON.stringify({ code: 'UPLOAD_COMPLETE_IN_PROGRESS', message: 'Another completion of upload u is in progress; ask again in a moment.', ray_id: 'r' }));
      return true;
    });
    try {
      const env = { ...fx.env, XDG_STATE_HOME: path.join(tempDir(), 'state'), GAMEHOST_ENDPOINT: front.endpoint };
      const started = performance.now();
      const r = await runCli(['build', 'push', file('busy.tar', 2 * PART), '--tag', 'busy:v1', '--progress', 'plain'], { env });
      expect(r.code).toBe(0);
      expect(busy).toBeLessThan(0);
      // Asked again after the Retry-After of each answer: 1 s, twice.
      expect(performance.now() - started).toBeGreaterThanOrEqual(2000);
      expect(r.stderr.split('\n').filter((l) => l === 'another completion of this upload is in progress; waiting')).toHaveLength(1);
      expect(r.stderr).not.toMatch(/retrying|HTTP 429|error/);
    } finally {
      front.close();
    }
  }, 60_000);

  // Replaces a test that timed the run: a limiter that did not hold would show a rate far above the limit.
  it('--limit-rate caps the whole upload: the rate shown stays within 10% of the limit, and no listener piles up', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const limit = 256 * 1024;
      const r = await runCli(['build', 'push', file('paced.tar', 2 * PART), '--tag', 'paced:v1', '--limit-rate', '256K', '--concurrency', '4', '--progress', 'json'], { env: fx.env });
      expect(r.code).toBe(0);
      const rated = events(r.stderr).filter((e) => e.type === 'progress' || e.type === 'completing');
      expect(rated.at(-1)!.type).toBe('completing');
      expect(rated.at(-1)!.rate_bytes_per_s).toBeGreaterThan(0);
      for (const e of rated) expect(e.rate_bytes_per_s).toBeLessThanOrEqual(limit * 1.1);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('at --limit-rate 1K progress moves: bytes and a rate before the end, not `0 B at 0 B/s` until the last write', async () => {
    const r = await runCli(['build', 'push', file('trickle.tar', 3 * 1024), '--tag', 'trickle:v1', '--limit-rate', '1K', '--progress', 'json'], { env: fx.env });
    expect(r.code).toBe(0);
    const during = events(r.stderr).filter((e) => e.type === 'progress' && e.bytes_sent < 3 * 1024);
    expect(during.length).toBeGreaterThan(0);
    expect(during.at(-1)!.bytes_sent).toBeGreaterThan(0);
    expect(during.at(-1)!.rate_bytes_per_s).toBeGreaterThan(0);
  }, 60_000);

  it('Ctrl-C under --limit-rate with the default concurrency keeps what was sent as whole parts, and the rerun sends only the rest', async () => {
    const env = { ...fx.env, XDG_STATE_HOME: path.join(tempDir(), 'state') };
    const f = file('limited.tar', 8 * PART);
    const args = [BIN, 'build', 'push', f, '--tag', 'limited:v1', '--progress', 'json'];
    // 8 parts at 128 KiB/s: about 4 s. With all 8 in flight sharing the rate, none was whole before the end.
    const child = spawn(process.execPath, [...args, '--limit-rate', '128K'], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    let interruptedAt = 0;
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
      const last = events(err).filter((e) => e.type === 'progress').at(-1);
      if (!interruptedAt && last && last.percent >= 30) {
        interruptedAt = last.bytes_sent;
        child.kill('SIGINT');
      }
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(130);
    expect(interruptedAt).toBeGreaterThan(0);
    const kept = events(err).filter((e) => e.type === 'part').length;
    // One part at a time: everything sent but the part on its way is whole.
    expect(kept).toBeGreaterThanOrEqual(Math.floor(interruptedAt / PART) - 1);
    expect(kept).toBeGreaterThanOrEqual(2);
    const again = await runCli(args.slice(1), { env });
    expect(again.code).toBe(0);
    const resumed = events(again.stderr);
    expect(resumed.find((e) => e.type === 'resume')).toMatchObject({ done_parts: kept, parts: 8 });
    expect(resumed.find((e) => e.type === 'complete')).toMatchObject({ bytes: 8 * PART, bytes_sent: (8 - kept) * PART });
  }, 60_000);

  it('under GitHub Actions: build_id, upload_id, sha256 and bytes are step outputs', async () => {
    const out = path.join(tempDir(), 'github-output');
    fs.writeFileSync(out, 'earlier=1\n');
    const f = file('ci.tar', 2 * PART);
    const r = await runCli(['build', 'push', f, '--tag', 'ci:v1', '--json'], { env: { ...fx.env, GITHUB_ACTIONS: 'true', GITHUB_OUTPUT: out } });
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(fs.readFileSync(out, 'utf8')).toBe(`earlier=1\nbuild_id=${result.build_id}\nupload_id=${result.upload_id}\nsha256=${result.sha256}\nbytes=${2 * PART}\n`);
    expect(result.sha256).toBe(crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex'));
    expect((await listBuilds(fx.emu.endpoint)).find((b) => b.build_id === result.build_id)?.complete).toBe(true);
  });
});

/** A stand-in for the service's export call and its presigned link, answering what the test sets. */
async function exportService(answer: { url: (origin: string) => string; download?: (res: http.ServerResponse) => void }) {
  const hits = { exports: 0, downloads: 0 };
  const server = http.createServer((req, res) => {
    req.resume();
    const origin = `http://${req.headers.host}`;
    if (req.method === 'POST' && req.url!.endsWith('/export-history')) {
      hits.exports++;
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ url: answer.url(origin) }));
    }
    hits.downloads++;
    answer.download?.(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const env = {
    GAMEHOST_ENDPOINT: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    GAMEHOST_TOKEN: 'cloud.test-token',
    GAMEHOST_GAME: '00000000-0000-4000-8000-000000000001',
  };
  return {
    env,
    hits,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('history export: the links the service gives', () => {
  it.each([
    ['a relative url', () => 'export.csv', 'the service\'s export url is not an absolute http(s) URL: "export.csv"'],
    ['an empty url', () => '', 'the service\'s export url is not an absolute http(s) URL: ""'],
    ['an ftp url', () => 'ftp://bucket/export.csv', 'the service\'s export url is not an absolute http(s) URL: "ftp://bucket/export.csv"'],
  ])('%s: one line, exit 1, nothing fetched, no retries', async (_name, url, line) => {
    const svc = await exportService({ url });
    try {
      const r = await runCli(['history', 'export', '--since', '1h', '-o', 'out.csv'], { env: svc.env, cwd: tempDir() });
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`error: ${line}\n`);
      expect(svc.hits).toEqual({ exports: 1, downloads: 0 });
    } finally {
      await svc.close();
    }
  });

  it('a 403 from the presigned link reads the XML and says to export again, not to log in', async () => {
    const svc = await exportService({
      url: (origin) => `${origin}/bucket/export.csv?X-Amz-Signature=abc`,
      download: (res) => {
        res.writeHead(403, { 'content-type': 'application/xml' });
        res.end(S3_EXPIRED);
      },
    });
    try {
      const r = await runCli(['history', 'export', '--since', '1h', '-o', 'out.csv'], { env: svc.env, cwd: tempDir() });
      expect(r.code).toBe(3);
      expect(r.stderr).toBe('error: 403 AccessDenied: Request has expired (ray 4D2C9F1B)\n  the download link was refused (it may have expired): run `gamehost history export` again for a new one\n');
      expect(svc.hits.downloads).toBe(1);
    } finally {
      await svc.close();
    }
  });
});

describe('history export: --timeout applies to the presigned download too', () => {
  const HEADER = 'lobby_id,namespace_id,namespace_name,region_id,region_name,tier_name,version_id,version_name,lobby_group_id,lobby_group_name,start_ts,stop_ts,total_uptime_ms,query_uptime_ms\n';

  it('a link that never answers: retried, then one line, exit 6, no file', async () => {
    const svc = await exportService({ url: (origin) => `${origin}/bucket/export.csv`, download: () => {} });
    try {
      const cwd = tempDir();
      const retry = { attempts: 2, baseMs: 1, maxMs: 1 };
      const r = await runCli(['history', 'export', '--since', '1h', '-o', 'out.csv', '--timeout', '0.2'], { env: svc.env, cwd, retry });
      expect(r.code).toBe(6);
      expect(r.stderr).toBe(`error: could not reach ${new URL(svc.env.GAMEHOST_ENDPOINT).host}: no answer in time (HEADERS_TIMEOUT)\n`);
      expect(svc.hits).toEqual({ exports: 1, downloads: 2 });
      expect(fs.readdirSync(cwd)).toEqual([]);
    } finally {
      await svc.close();
    }
  });

  it('a body that stops coming: one line, exit 6, nothing half-written', async () => {
    const svc = await exportService({
      url: (origin) => `${origin}/bucket/export.csv`,
      download: (res) => {
        res.writeHead(200, { 'content-type': 'text/csv', 'content-length': String(HEADER.length + 1000) });
        res.write(HEADER);
      },
    });
    try {
      const cwd = tempDir();
      const r = await runCli(['history', 'export', '--since', '1h', '-o', 'out.csv', '--timeout', '0.2'], { env: svc.env, cwd });
      expect(r.code).toBe(6);
      expect(r.stderr).toBe(`error: could not reach ${new URL(svc.env.GAMEHOST_ENDPOINT).host}: the answer stalled (BODY_TIMEOUT)\n`);
      expect(svc.hits.downloads).toBe(1);
      expect(fs.readdirSync(cwd)).toEqual([]);
    } finally {
      await svc.close();
    }
  });
});

describe('retries a person can see', () => {
  it('on a terminal, a line per retry of an API call; piped, only the final error', async () => {
    // A service that keeps answering 503 (a refused connection on loopback is final and never retried).
    const server = http.createServer((_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"code":"SERVICE_UNAVAILABLE","message":"down for a moment"}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const env = { GAMEHOST_ENDPOINT: `http://127.0.0.1:${port}`, GAMEHOST_TOKEN: 'cloud.t', GAMEHOST_NAMESPACE_TOKEN: 'pub.t', GAMEHOST_GAME: '00000000-0000-4000-8000-000000000001' };
      const tty = await runCli(['stats'], { env, tty: true });
      expect(tty.code).toBe(5);
      const lines = plain(tty.stderr).trim().split('\n');
      expect(lines.slice(0, 2)).toEqual([
        expect.stringMatching(/^retrying in (\d+ ms|\d+\.\d s) \(2\/3\): HTTP 503 SERVICE_UNAVAILABLE$/),
        expect.stringMatching(/^retrying in (\d+ ms|\d+\.\d s) \(3\/3\): HTTP 503 SERVICE_UNAVAILABLE$/),
      ]);
      expect(lines.slice(2, 3)).toEqual(['error: down for a moment (SERVICE_UNAVAILABLE)']);
      const piped = await runCli(['stats'], { env });
      expect(piped.code).toBe(5);
      expect(piped.stderr).not.toContain('retrying');
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
