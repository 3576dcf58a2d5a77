// The part sender on real loopback HTTP: every part arrives whole, at its own URL, and progress counts each byte once;
// under a rate limit, as few parts in flight as the limit needs.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agents } from '../../src/api/agents.js';
import { uploadParts } from '../../src/upload/engine.js';
import type { Part } from '../../src/upload/plan.js';
import { RateLimiter } from '../../src/upload/ratelimit.js';
import { tempDir } from '../helpers/cli.js';

const MiB = 1024 * 1024;

describe('uploadParts', () => {
  const dir = tempDir();
  const file = path.join(dir, 'build.bin');
  const data = crypto.randomBytes(7 * MiB + 123);
  const received = new Map<string, Buffer>();
  let server: http.Server;
  let base: string;

  beforeAll(async () => {
    fs.writeFileSync(file, data);
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.set(req.url!, Buffer.concat(chunks));
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const parts = (run: string): Part[] => {
    const size = 2 * MiB;
    const out: Part[] = [];
    for (let offset = 0, n = 1; offset < data.length; offset += size, n++) {
      out.push({ number: n, offset, length: Math.min(size, data.length - offset), url: `${base}/${run}/part-${n}` });
    }
    return out;
  };

  it.each([1, 3, 8])('with %i parts in flight, each part arrives whole', async (concurrency) => {
    const run = `c${concurrency}`;
    const agents = new Agents({}, 10_000);
    const list = parts(run);
    let moved = 0;
    try {
      await uploadParts({
        file,
        parts: list,
        totalParts: list.length,
        concurrency,
        retry: { attempts: 1, baseMs: 1, maxMs: 1 },
        stallMs: 10_000,
        dispatcher: (url) => agents.for(url),
        signal: new AbortController().signal,
        events: { progress: (n) => (moved += n) },
      });
    } finally {
      await agents.close();
    }
    expect(moved).toBe(data.length);
    for (const p of list) {
      expect(received.get(`/${run}/part-${p.number}`)?.equals(data.subarray(p.offset, p.offset + p.length))).toBe(true);
    }
  });

  it('a file shorter than its parts fails the part as the fault of the file: one UploadError, not retried as a network error', async () => {
    const agents = new Agents({}, 10_000);
    const short: Part[] = [{ number: 1, offset: data.length - 1000, length: 5000, url: `${base}/short/part-1` }];
    let retries = 0;
    try {
      await expect(
        uploadParts({
          file,
          parts: short,
          totalParts: 1,
          concurrency: 1,
          retry: { attempts: 3, baseMs: 1, maxMs: 1 },
          stallMs: 10_000,
          dispatcher: (url) => agents.for(url),
          signal: new AbortController().signal,
          events: { retry: () => retries++ },
        }),
      ).rejects.toThrow(`part 1 of 1 failed: ${file} became shorter during the upload; the build was not completed`);
    } finally {
      await agents.close();
    }
    expect(retries).toBe(0);
    expect(received.has('/short/part-1')).toBe(false);
  });
});

describe('uploadParts under --limit-rate', () => {
  const dir = tempDir();
  const file = path.join(dir, 'limited.bin');
  const size = 4 * 64 * 1024;

  /** A server answering each PUT `answerAfterMs` after its body is in; it counts the parts in flight at once. */
  async function partServer(answerAfterMs: number) {
    const seen = { inFlight: 0, most: 0 };
    const server = http.createServer((req, res) => {
      seen.most = Math.max(seen.most, ++seen.inFlight);
      req.resume();
      req.on('end', () =>
        setTimeout(() => {
          seen.inFlight--;
          res.end();
        }, answerAfterMs),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return { seen, base, close: () => new Promise<void>((r) => server.close(() => r())) };
  }

  async function send(base: string, rate: number) {
    const agents = new Agents({}, 10_000);
    const parts: Part[] = [0, 1, 2, 3].map((i) => ({ number: i + 1, offset: i * 64 * 1024, length: 64 * 1024, url: `${base}/p${i + 1}` }));
    try {
      await uploadParts({
        file,
        parts,
        totalParts: 4,
        concurrency: 4,
        retry: { attempts: 1, baseMs: 1, maxMs: 1 },
        stallMs: 30_000,
        limiter: new RateLimiter(rate),
        dispatcher: (url) => agents.for(url),
        signal: new AbortController().signal,
      });
    } finally {
      await agents.close();
    }
  }

  beforeAll(() => fs.writeFileSync(file, crypto.randomBytes(size)));

  it('when the limit sets the pace, one part at a time (parts in parallel would only share the rate)', async () => {
    const srv = await partServer(0);
    try {
      await send(srv.base, 128 * 1024);
      expect(srv.seen.most).toBe(1);
    } finally {
      await srv.close();
    }
  });

  it('when the connections set the pace (slow answers), more parts join, up to --concurrency', async () => {
    const srv = await partServer(2_500);
    try {
      await send(srv.base, 16 * 1024 * 1024);
      expect(srv.seen.most).toBeGreaterThanOrEqual(2);
    } finally {
      await srv.close();
    }
  }, 30_000);
});
