// Bodies sent slowly, or never finished, by a client with no token at all: find reads its body before the token (as
// the service checks), so each such connection once held up to 1 MiB until Node's 300 s request timeout, and a few
// thousand of them held gigabytes. Now a client's bodies in flight are bounded (8 MiB), the listener's too, and each
// body has a time its length allows.
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { EmulatorError, ERRORS } from '../../src/emulator/errors.js';
import { BodyBudget, BODY_BYTES_PER_ADDRESS, bodyDeadlineMs } from '../../src/emulator/routes/bodies.js';
import type { RequestContext } from '../../src/emulator/routes/context.js';
import { MAX_JSON_BODY, readText } from '../../src/emulator/routes/request.js';
import { expectErrorShape, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';

const MiB = 1024 * 1024;

/** A socket that has sent a request's headers, declaring `length` bytes of body, and `sent` of them. */
async function partial(endpoint: string, path: string, length: number, sent: number): Promise<Socket> {
  const { hostname, port } = new URL(endpoint);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.on('error', () => {});
  socket.write(`POST ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`);
  socket.write(Buffer.alloc(sent, 0x20));
  return socket;
}

/** What a socket receives until it closes: the answer's status line and body. */
function answer(socket: Socket): Promise<{ status: number; text: string }> {
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  return new Promise((resolve) =>
    socket.once('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text });
    }),
  );
}

describe('the bytes of bodies in flight', () => {
  it('are bounded per address and in all; each release counts once', () => {
    const budget = new BodyBudget({ perAddress: 10, total: 15 });
    const a1 = budget.take('a', 6);
    expect(typeof a1).toBe('function');
    expect(budget.take('a', 5)).toBe('address');
    const b1 = budget.take('b', 9);
    expect(typeof b1).toBe('function');
    // a 6 and b 9: 15 in all, so nothing more from anyone, even within its own share.
    expect(budget.take('c', 1)).toBe('total');
    (a1 as () => void)();
    (a1 as () => void)();
    // Released once: a's 6 are free again, and no more than that.
    expect(typeof budget.take('a', 6)).toBe('function');
    expect(budget.take('c', 1)).toBe('total');
    (b1 as () => void)();
    expect(typeof budget.take('c', 9)).toBe('function');
  });

  it('a body of the largest size may take 26 s; an empty one 10 s', () => {
    expect(bodyDeadlineMs(MAX_JSON_BODY)).toBe(26_000);
    expect(bodyDeadlineMs(0)).toBe(10_000);
  });
});

describe('a body that does not arrive in time', () => {
  let server: Server;
  let endpoint: string;
  const budget = new BodyBudget({ deadlineMs: () => 300 });
  beforeAll(async () => {
    // readText as every route reads its body, on a real listener; its refusal answered as the emulator answers it.
    server = createServer((req, res) => {
      const rc = { req, res, bodies: budget } as unknown as RequestContext;
      readText(rc).then(
        (text) => res.end(`got ${text.length}`),
        (err: unknown) => {
          const code = err instanceof EmulatorError ? err.code : 'ERROR';
          res.writeHead(ERRORS[code].status, { 'content-type': 'application/json' }).end(JSON.stringify({ code }));
        },
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('is answered 408 API_BODY_TIMEOUT and its connection closed; its bytes are free again', async () => {
    const socket = await partial(endpoint, '/', 1000, 10);
    const got = await answer(socket);
    expect(got.status).toBe(408);
    expect(got.text).toContain('"code":"API_BODY_TIMEOUT"');
    expect(got.text.toLowerCase()).toContain('connection: close');
    // Nothing of it is still counted: the address may send its whole share again.
    const release = budget.take('127.0.0.1', BODY_BYTES_PER_ADDRESS);
    expect(typeof release).toBe('function');
    (release as () => void)();
  });

  it('a client gone before its handler reads the body: the read ends at once, not at the deadline', async () => {
    // Its handler starts reading only after the client has gone (as behind a fault's latency): the end of the
    // request is behind it, and the read must see that rather than wait out its time (the push that was
    // interrupted while its build was created waited 10 s more for it).
    const slow = new BodyBudget({ deadlineMs: () => 60_000 });
    const settled: string[] = [];
    const late = createServer((req, res) => {
      setTimeout(() => {
        readText({ req, res, bodies: slow } as unknown as RequestContext).then(
          () => settled.push('read'),
          (err: unknown) => settled.push(err instanceof EmulatorError ? err.code : 'gone'),
        );
      }, 200);
    });
    await new Promise<void>((resolve) => late.listen(0, '127.0.0.1', resolve));
    try {
      const socket = await partial(`http://127.0.0.1:${(late.address() as AddressInfo).port}`, '/', 1000, 10);
      await new Promise((resolve) => setTimeout(resolve, 50));
      socket.destroy();
      await vi.waitFor(() => expect(settled).toEqual(['gone']), { timeout: 5_000, interval: 20 });
      // Its bytes are counted no more.
      expect(typeof slow.take('127.0.0.1', BODY_BYTES_PER_ADDRESS)).toBe('function');
    } finally {
      late.closeAllConnections();
      await new Promise<void>((resolve) => late.close(() => resolve()));
    }
  });

  it('one that arrives in time is read whole', async () => {
    const res = await fetch(endpoint, { method: 'POST', body: 'x'.repeat(5000) });
    expect(await res.text()).toBe('got 5000');
  });
});

describe('slow bodies against the emulator, with no token', () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ tokenless: false });
  });
  afterAll(() => t?.stop());

  it("a ninth 1 MiB body on its way from one address is refused unread, 429; once they are gone, it is read", async () => {
    const find = (body: string) => t.call('POST', '/matchmaker/lobbies/find', { token: t.tokens.public, body });
    const slow = await Promise.all(Array.from({ length: BODY_BYTES_PER_ADDRESS / MiB }, () => partial(t.endpoint, '/matchmaker/lobbies/find', MiB, 64 * 1024)));
    try {
      // The eight are counted once the emulator has their headers: a find of any size is then refused, unread.
      let refused = await find('{"game_modes":["default"]}');
      for (let i = 0; i < 100 && refused.status !== 429; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        refused = await find('{"game_modes":["default"]}');
      }
      expect(expectErrorShape(refused, 429, 'API_RATE_LIMIT').message).toContain('8 MiB at most may be on their way from one address');
      expect(refused.headers.get('retry-after')).toBe('1');
    } finally {
      for (const socket of slow) socket.destroy();
    }
    // Gone, they count no more: the same find is answered.
    let found = await find('{"game_modes":["default"]}');
    for (let i = 0; i < 100 && found.status === 429; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      found = await find('{"game_modes":["default"]}');
    }
    expect(found.status, found.text).toBe(200);
  });
});
