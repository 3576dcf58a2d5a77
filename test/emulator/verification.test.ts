// The verification call made from the emulator's host to a developer's URL: an address that is not public is
// refused, whether the URL writes it or a name resolves to it, unless the emulator allows loopback verification.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { globallyRoutable, publicLookup, verify } from '../../src/emulator/services/verification.js';

let server: http.Server;
let port: number;
const calls: string[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    calls.push(`${req.method} ${req.headers.host}`);
    req.resume();
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** A resolver that answers every name with `addresses`, as a DNS server the developer controls could. */
function resolvingTo(...addresses: string[]): LookupFunction {
  return (_hostname, options, callback) => {
    const all = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    if (options.all) callback(null, all);
    else callback(null, all[0]!.address, all[0]!.family);
  };
}

const config = (host: string) => ({ url: `http://${host}:${port}/verify`, headers: {} });

describe('the verification call', () => {
  it('refuses a name that resolves to this host, before any byte reaches it; allowed with verificationLoopback', async () => {
    const before = calls.length;
    for (const lookup of [resolvingTo('127.0.0.1'), resolvingTo('93.184.215.14', '127.0.0.1'), resolvingTo('::ffff:127.0.0.1')]) {
      await expect(verify([config('internal.example')], {}, { allowLoopback: false, lookup })).rejects.toMatchObject({
        code: 'MATCHMAKER_VERIFICATION_REQUEST_FAILED',
      });
    }
    expect(calls.length).toBe(before);
    await verify([config('internal.example')], {}, { allowLoopback: true, lookup: resolvingTo('127.0.0.1') });
    expect(calls.slice(before)).toEqual([`POST internal.example:${port}`]);
  });

  it('refuses an address written in the URL, in any of its spellings', async () => {
    for (const host of ['127.0.0.1', '2130706433', '0x7f.1', '127.1', 'localhost', '[::1]', '[::ffff:7f00:1]']) {
      await expect(verify([config(host)], {}, { allowLoopback: false })).rejects.toMatchObject({ code: 'MATCHMAKER_VERIFICATION_REQUEST_FAILED' });
    }
  });

  it('publicLookup passes public addresses on as they came, and names the address it refuses', async () => {
    const look = (lookup: LookupFunction, all: boolean) =>
      new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
        publicLookup(lookup)('game.example', { all }, (err, address) => resolve({ err, address })),
      );
    expect(await look(resolvingTo('93.184.215.14'), false)).toEqual({ err: null, address: '93.184.215.14' });
    expect(await look(resolvingTo('93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'), true)).toMatchObject({ err: null });
    const refused = await look(resolvingTo('2606:2800:21f:cb07:6820:80da:af6b:8b2c', '10.0.0.7'), true);
    expect(refused.err).toMatchObject({ code: 'ENOTPUBLIC', message: 'game.example resolves to 10.0.0.7, which is not a public address' });
  });

  it('globallyRoutable: what the public internet routes', () => {
    for (const host of ['8.8.8.8', '93.184.215.14', '[2606:4700::1111]', '[2001:4860:4860::8888]']) expect(globallyRoutable(host)).toBe(true);
    const local = ['0.0.0.0', '10.1.2.3', '100.64.0.1', '127.0.0.1', '169.254.169.254', '172.16.0.1', '192.168.1.1', '198.18.0.1', '224.0.0.1', '255.255.255.255'];
    const local6 = ['[::]', '[::1]', '[::ffff:7f00:1]', '[::7f00:1]', '[fc00::1]', '[fd12::1]', '[fe80::1]', '[fec0::1]', '[ff02::1]', '[64:ff9b::7f00:1]', '[2001:db8::1]'];
    for (const host of [...local, ...local6]) expect(globallyRoutable(host), host).toBe(false);
  });
});
