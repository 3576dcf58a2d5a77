import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { Agents, proxyFor } from '../../src/api/agents.js';
import { checkServiceUrl, isRetryable, parseErrorBody, responseError, retryLine, send, toNetworkError } from '../../src/api/transport.js';
import { ApiError, NetworkError, ResponseError, UsageError } from '../../src/errors.js';

const api = (status: number) => new ApiError(status, { code: 'X', message: 'm' });
const net = (code: string, hostname = 'api.example.com') => new NetworkError('could not reach h', code, { hostname });

describe('one set of retry rules for API calls, presigned GETs and part PUTs', () => {
  it('says a retry the way a person reads it: a short wait in ms (never "0.0 s"), a longer one in seconds', () => {
    expect(retryLine({ attempt: 2, attempts: 6, waitMs: 37, error: net('ECONNREFUSED') })).toBe('retrying in 37 ms (2/6): connection refused');
    expect(retryLine({ attempt: 3, attempts: 6, waitMs: 1234, error: api(503) })).toBe('retrying in 1.2 s (3/6): HTTP 503 X');
  });

  it.each([
    ['a 429, even when not idempotent', api(429), false, true],
    ['a 503 when idempotent', api(503), true, true],
    ['a 503 when not idempotent', api(503), false, false],
    ['a 408 when idempotent', api(408), true, true],
    ['a 400', api(400), true, false],
    ['a 403', api(403), true, false],
    ['a reset connection when idempotent', net('ECONNRESET'), true, true],
    ['a reset connection when not idempotent (it may have been acted on)', net('ECONNRESET'), false, false],
    ['a refused connection when not idempotent (it never left)', net('ECONNREFUSED'), false, true],
    ['a refused remote connection (a restarting load balancer refuses for a moment)', net('ECONNREFUSED', '203.0.113.7'), true, true],
    ['a refused connection on 127.0.0.1: nothing listens there', net('ECONNREFUSED', '127.0.0.1'), true, false],
    ['a refused connection on localhost', net('ECONNREFUSED', 'localhost'), true, false],
    ['a refused connection on [::1]', net('ECONNREFUSED', '[::1]'), true, false],
    ['a name that does not resolve', net('ENOTFOUND'), true, false],
    ['a DNS lookup that failed for now (EAI_AGAIN)', net('EAI_AGAIN'), true, true],
    ['a certificate failure', net('DEPTH_ZERO_SELF_SIGNED_CERT'), true, false],
    ['a TLS version failure', net('ERR_SSL_WRONG_VERSION_NUMBER'), true, false],
    ['anything else', new Error('bug'), true, false],
  ])('%s', (_name, err, idempotent, expected) => {
    expect(isRetryable(err, idempotent)).toBe(expected);
  });

  it('a failure from the wire knows its host: a name that does not resolve is final, with what to check', () => {
    const err = toNetworkError(Object.assign(new Error('getaddrinfo ENOTFOUND api.nowhere.example'), { code: 'ENOTFOUND' }), new URL('https://api.nowhere.example/x'));
    expect(err.message).toBe('could not reach api.nowhere.example: host not found (ENOTFOUND)');
    expect(err.hint).toBe('no address is known for api.nowhere.example: check the endpoint (--endpoint, GAMEHOST_ENDPOINT or the profile)');
    expect(isRetryable(err, true)).toBe(false);
    const refused = (host: string) => toNetworkError(Object.assign(new Error(`connect ECONNREFUSED ${host}`), { code: 'ECONNREFUSED' }), new URL(`http://${host}:9/`));
    expect(isRetryable(refused('127.0.0.1'), true)).toBe(false);
    expect(isRetryable(refused('[::1]'), true)).toBe(false);
    expect(isRetryable(refused('198.51.100.4'), true)).toBe(true);
  });
});

describe("S3's XML errors", () => {
  it('reads Code, Message and RequestId', () => {
    const xml = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match &amp; so on</Message><RequestId>R1</RequestId></Error>';
    expect(parseErrorBody(403, xml)).toEqual({ code: 'SignatureDoesNotMatch', message: 'The request signature we calculated does not match & so on', ray_id: 'R1' });
  });
  it('a presigned answer reads as one line with the status, and its 403 never blames the token', () => {
    const err = responseError(404, {}, '<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>', { presigned: 'part' });
    expect(err.message).toBe('404 NoSuchUpload: The specified upload does not exist.');
    const denied = responseError(403, {}, '<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>', { presigned: 'export' });
    expect(denied.message).toBe('403 AccessDenied: Request has expired');
    expect(denied.hint).not.toContain('login');
    expect(responseError(403, {}, '{"code":"API_FORBIDDEN","message":"no"}').hint).toContain('gamehost login');
  });
});

describe('URLs from the service', () => {
  it.each(['https://bucket.example/p?sig=1', 'http://127.0.0.1:6420/_export/x'])('accepts %s', (url) => {
    expect(checkServiceUrl('export url', url).href).toBe(new URL(url).href);
  });
  it.each([
    ['export.csv', '"export.csv"'],
    ['', '""'],
    ['ftp://bucket/x', '"ftp://bucket/x"'],
    ['file:///etc/passwd', '"file:///etc/passwd"'],
    [42, '42'],
  ])('refuses %j, naming the field and the value', (value, shown) => {
    expect(() => checkServiceUrl('export url', value)).toThrow(new ResponseError(`the service's export url is not an absolute http(s) URL: ${shown}`));
  });
});

describe('proxyFor', () => {
  const u = (s: string) => new URL(s);
  it('takes HTTPS_PROXY for https (else HTTP_PROXY) and HTTP_PROXY for http, upper case first', () => {
    expect(proxyFor({ HTTPS_PROXY: 'http://p:1', HTTP_PROXY: 'http://q:2' }, u('https://s3.example/x'))?.host).toBe('p:1');
    expect(proxyFor({ http_proxy: 'q:2' }, u('https://s3.example/x'))?.host).toBe('q:2');
    expect(proxyFor({ HTTPS_PROXY: 'http://p:1' }, u('http://s3.example/x'))).toBeUndefined();
    expect(proxyFor({ HTTPS_PROXY: 'http://P:1', https_proxy: 'http://p:2' }, u('https://s3.example/x'))?.host).toBe('p:1');
  });
  it('keeps credentials and the https scheme of a proxy URL; refuses what is no proxy URL (nothing is sent)', () => {
    const p = proxyFor({ HTTPS_PROXY: 'https://user:p%40ss@proxy.example:3128' }, u('https://s3.example/x'))!;
    expect([p.protocol, p.username, decodeURIComponent(p.password), p.port]).toEqual(['https:', 'user', 'p@ss', '3128']);
    expect(() => proxyFor({ HTTPS_PROXY: 'socks5://user:secret@p:1' }, u('https://s3.example/x'))).toThrow(
      new UsageError('HTTPS_PROXY is not an http:// or https:// proxy URL: "socks5://…@p:1"'),
    );
    expect(() => proxyFor({ HTTP_PROXY: 'http://[::1' }, u('http://s3.example/x'))).toThrow(UsageError);
  });

  const env = { HTTPS_PROXY: 'http://p:1', HTTP_PROXY: 'http://p:1' };
  const bypassed = (noProxy: string, url: string) => proxyFor({ ...env, NO_PROXY: noProxy }, u(url)) === undefined;
  it.each([
    // names: the name and its subdomains, written bare, with a leading dot or with *.
    ['example.com', 'https://s3.example.com/x', true],
    ['example.com', 'https://example.com/x', true],
    ['.example.com', 'https://s3.example.com/x', true],
    ['*.example.com', 'https://s3.example.com/x', true],
    ['ample.com', 'https://s3.example.com/x', false],
    ['EXAMPLE.com', 'https://S3.Example.COM/x', true],
    // ports
    ['example.com:8443', 'https://s3.example.com/x', false],
    ['example.com:8443', 'https://s3.example.com:8443/x', true],
    ['example.com:443', 'https://s3.example.com/x', true],
    // IPv4, IPv6 with and without brackets, with a port
    ['localhost, 127.0.0.1', 'https://127.0.0.1:9/x', true],
    ['127.0.0.1', 'https://127.0.0.2:9/x', false],
    ['::1', 'http://[::1]:47300/x', true],
    ['[::1]', 'http://[::1]:47300/x', true],
    ['[::1]:47300', 'http://[::1]:47300/x', true],
    ['[::1]:80', 'http://[::1]:47300/x', false],
    ['0:0::1', 'http://[::1]:47300/x', true],
    ['::1', 'http://127.0.0.1/x', false],
    ['127.0.0.1:9', 'http://127.0.0.1:9/x', true],
    // CIDR ranges, v4 and v6
    ['127.0.0.0/8', 'http://127.4.5.6:9/x', true],
    ['10.0.0.0/8', 'http://10.1.2.3/x', true],
    ['10.0.0.0/8', 'http://11.1.2.3/x', false],
    ['192.168.0.0/16', 'http://192.168.7.1/x', true],
    ['fd00::/8', 'http://[fd12::5]/x', true],
    ['fd00::/8', 'http://[fe80::1]/x', false],
    ['10.0.0.0/8', 'http://ten.example/x', false],
    // everything
    ['*', 'https://anything/x', true],
    ['', 'https://anything/x', false],
    ['other.example  example.com', 'https://example.com/x', true],
  ])('NO_PROXY=%j for %s: bypassed %s', (list, url, expected) => {
    expect(bypassed(list, url)).toBe(expected);
  });
  it('reads no_proxy when NO_PROXY is not set', () => {
    expect(proxyFor({ ...env, no_proxy: '127.0.0.0/8' }, u('http://127.0.0.1/x'))).toBeUndefined();
  });
});

describe('send: the idle-body limit', () => {
  /** A server that answers `body`, writing `stallAfter` bytes of it and then nothing (all of it when undefined). */
  async function serve(body: Buffer, stallAfter?: number) {
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-length': String(body.length) });
      if (stallAfter === undefined) res.end(body);
      else res.write(body.subarray(0, stallAfter));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/x`), server };
  }
  const init = (agents: Agents, url: URL) => ({ method: 'GET' as const, headers: {}, dispatcher: agents.for(url), signal: new AbortController().signal });

  it('a reader slower than the limit, with bytes in hand, is not failed: the server was not idle', async () => {
    const body = Buffer.alloc(4 * 1024 * 1024, 7);
    const { url, server } = await serve(body);
    const agents = new Agents({}, 200);
    try {
      const res = await send(url, init(agents, url));
      const chunks = res.body[Symbol.asyncIterator]();
      let got = ((await chunks.next()).value as Buffer).length;
      // The reader holds off well past the limit, with bytes in hand.
      await new Promise((r) => setTimeout(r, 600));
      expect(res.body.readableLength).toBeGreaterThan(0);
      for (let c = await chunks.next(); !c.done; c = await chunks.next()) got += (c.value as Buffer).length;
      expect(got).toBe(body.length);
    } finally {
      await agents.close();
      server.close();
    }
  });

  it('a server that stops sending fails the body with BODY_TIMEOUT', async () => {
    const { url, server } = await serve(Buffer.alloc(100_000, 7), 1000);
    const agents = new Agents({}, 200);
    try {
      const res = await send(url, init(agents, url));
      const err = await (async () => {
        for await (const _ of res.body);
      })().then(() => undefined, (e: unknown) => e);
      // What the reader (the export, an API call's text) makes of it.
      expect(toNetworkError(err, url)).toMatchObject({ code: 'BODY_TIMEOUT', message: `could not reach ${url.host}: the answer stalled (BODY_TIMEOUT)` });
    } finally {
      await agents.close();
      server.closeAllConnections();
      server.close();
    }
  });
});
