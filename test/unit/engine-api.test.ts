// The Docker Engine API client's two pure parts: DOCKER_HOST (else the docker CLI's context) read as the docker CLI
// reads it, and the attach
// stream's 8-byte frame headers undone into stdout and stderr lines, however the bytes are cut into chunks.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SOCKET, engineAddress, FrameDemuxer, type FrameStream } from '../../src/emulator/runtime/engine-api.js';
import { LineSplitter } from '../../src/emulator/runtime/runtime.js';
import { MAX_LOG_LINE_BYTES } from '../../src/emulator/stores/store.js';
import { tempDir } from '../helpers/cli.js';

describe('engineAddress', () => {
  // An empty docker CLI directory: no context of the machine's own is read.
  const at = (DOCKER_HOST?: string, more: Record<string, string> = {}) => engineAddress({ DOCKER_CONFIG: tempDir(), DOCKER_HOST, ...more });
  const socket = (where: string, path: string) => ({ where, socketPath: path, origin: 'http://localhost', basePath: '' });

  it('no DOCKER_HOST (or a blank one): the platform\'s default socket', () => {
    expect(at()).toEqual(socket(DEFAULT_SOCKET, DEFAULT_SOCKET));
    expect(at('  ')).toEqual(socket(DEFAULT_SOCKET, DEFAULT_SOCKET));
  });

  it('unix:// and npipe://: the socket or pipe named, the default when none is', () => {
    expect(at('unix:///run/user/1000/docker.sock')).toEqual(socket('unix:///run/user/1000/docker.sock', '/run/user/1000/docker.sock'));
    expect(at('npipe:////./pipe/docker_engine')).toEqual(socket('npipe:////./pipe/docker_engine', '//./pipe/docker_engine'));
    expect(at('unix://')).toEqual(socket('unix://', DEFAULT_SOCKET));
  });

  it('tcp://: plain http on 2375 by default; TLS (DOCKER_TLS_VERIFY, https://) on 2376 with the certificates\' directory', () => {
    expect(at('tcp://10.0.0.5:2375')).toEqual({ where: 'tcp://10.0.0.5:2375', origin: 'http://10.0.0.5:2375', basePath: '' });
    expect(at('tcp://docker.example').origin).toBe('http://docker.example:2375');
    expect(at('tcp://docker.example:80').origin).toBe('http://docker.example:80');
    expect(at('tcp://:2375').origin).toBe('http://localhost:2375');
    expect(at('tcp://[::1]:2375').origin).toBe('http://[::1]:2375');
    expect(at('127.0.0.1:2375').origin).toBe('http://127.0.0.1:2375');
    expect(at('tcp://docker.example:2375/prefix/').basePath).toBe('/prefix');
    expect(at('tcp://docker.example', { DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: '/certs' })).toEqual({
      where: 'tcp://docker.example',
      origin: 'https://docker.example:2376',
      basePath: '',
      certDir: '/certs',
    });
    expect(at('https://docker.example:8443').origin).toBe('https://docker.example:8443');
  });

  it('ssh://, other schemes and what is no address are refused in one line', () => {
    expect(() => at('ssh://me@build-host')).toThrow(
      'DOCKER_HOST "ssh://me@build-host": ssh:// is not supported here; forward the daemon\'s socket instead (ssh -NL /tmp/docker.sock:/var/run/docker.sock me@build-host) and set DOCKER_HOST=unix:///tmp/docker.sock',
    );
    expect(() => at('fd://')).toThrow('DOCKER_HOST "fd://": fd:// is not supported here; use unix://, npipe:// or tcp://');
    for (const bad of ['tcp://docker example', 'tcp://host:port', 'tcp://host:2375?x=1'])
      expect(() => at(bad)).toThrow(`DOCKER_HOST "${bad}" is not an address such as tcp://127.0.0.1:2375 or unix:///var/run/docker.sock`);
  });
});

describe('engineAddress: the docker CLI\'s contexts, where DOCKER_HOST is not set', () => {
  /** A docker CLI directory as `docker context create` leaves it: each context's meta.json under its name's SHA-256. */
  const cliDir = (current: string | undefined, contexts: Record<string, string>, tls: string[] = []) => {
    const dir = tempDir();
    if (current !== undefined) fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ auths: {}, currentContext: current }));
    for (const [name, host] of Object.entries(contexts)) {
      const id = createHash('sha256').update(name).digest('hex');
      fs.mkdirSync(path.join(dir, 'contexts/meta', id), { recursive: true });
      fs.writeFileSync(path.join(dir, 'contexts/meta', id, 'meta.json'), JSON.stringify({ Name: name, Metadata: {}, Endpoints: { docker: { Host: host, SkipTLSVerify: false } } }));
      if (tls.includes(name)) {
        fs.mkdirSync(path.join(dir, 'contexts/tls', id, 'docker'), { recursive: true });
        for (const file of ['ca.pem', 'cert.pem', 'key.pem']) fs.writeFileSync(path.join(dir, 'contexts/tls', id, 'docker', file), '');
      }
    }
    return dir;
  };
  const desktop = 'unix:///Users/me/.docker/run/docker.sock';
  const colima = 'unix:///Users/me/.colima/default/docker.sock';

  it("the config's current context (Docker Desktop's desktop-linux, Colima): its socket, named in messages", () => {
    const dir = cliDir('desktop-linux', { 'desktop-linux': desktop, colima });
    expect(engineAddress({ DOCKER_CONFIG: dir })).toEqual({
      where: `${desktop} (Docker context "desktop-linux")`,
      socketPath: '/Users/me/.docker/run/docker.sock',
      origin: 'http://localhost',
      basePath: '',
    });
  });

  it('DOCKER_CONTEXT over the current one, DOCKER_HOST over both; default (or none) is the platform socket', () => {
    const dir = cliDir('desktop-linux', { 'desktop-linux': desktop, colima });
    expect(engineAddress({ DOCKER_CONFIG: dir, DOCKER_CONTEXT: 'colima' }).socketPath).toBe('/Users/me/.colima/default/docker.sock');
    expect(engineAddress({ DOCKER_CONFIG: dir, DOCKER_CONTEXT: 'colima', DOCKER_HOST: 'unix:///tmp/d.sock' }).socketPath).toBe('/tmp/d.sock');
    expect(engineAddress({ DOCKER_CONFIG: dir, DOCKER_CONTEXT: 'default' }).socketPath).toBe(DEFAULT_SOCKET);
    expect(engineAddress({ DOCKER_CONFIG: cliDir('default', {}) }).socketPath).toBe(DEFAULT_SOCKET);
    expect(engineAddress({ DOCKER_CONFIG: cliDir(undefined, {}) }).socketPath).toBe(DEFAULT_SOCKET);
    // A config with no currentContext (only credentials, as most are).
    const plain = tempDir();
    fs.writeFileSync(path.join(plain, 'config.json'), '{"auths":{}}');
    expect(engineAddress({ DOCKER_CONFIG: plain }).socketPath).toBe(DEFAULT_SOCKET);
  });

  it("a tcp context: TLS with the context's own certificates where it has them, plain http where not", () => {
    const dir = cliDir('remote', { remote: 'tcp://build-host:2376', lan: 'tcp://10.0.0.5:2375' }, ['remote']);
    const id = createHash('sha256').update('remote').digest('hex');
    expect(engineAddress({ DOCKER_CONFIG: dir })).toEqual({
      where: 'tcp://build-host:2376 (Docker context "remote")',
      origin: 'https://build-host:2376',
      basePath: '',
      certDir: path.join(dir, 'contexts/tls', id, 'docker'),
    });
    // DOCKER_TLS_VERIFY is DOCKER_HOST's, not a context's.
    expect(engineAddress({ DOCKER_CONFIG: dir, DOCKER_CONTEXT: 'lan', DOCKER_TLS_VERIFY: '1' })).toMatchObject({ origin: 'http://10.0.0.5:2375', certDir: undefined });
  });

  it('a context that does not exist, a config that is not JSON, a context with no docker endpoint: one line each', () => {
    const dir = cliDir('gone', { 'no-endpoint': '' });
    expect(() => engineAddress({ DOCKER_CONFIG: dir })).toThrow(`Docker context "gone" (from ${path.join(dir, 'config.json')}) does not exist: \`docker context ls\` lists those there are`);
    expect(() => engineAddress({ DOCKER_CONFIG: dir, DOCKER_CONTEXT: 'nope' })).toThrow('Docker context "nope" (from DOCKER_CONTEXT) does not exist');
    expect(() => engineAddress({ DOCKER_CONFIG: dir, DOCKER_CONTEXT: 'no-endpoint' })).toThrow(/^Docker context "no-endpoint" names no Docker endpoint \(/);
    const broken = tempDir();
    fs.writeFileSync(path.join(broken, 'config.json'), '{"currentContext": ');
    expect(() => engineAddress({ DOCKER_CONFIG: broken })).toThrow(new RegExp(`^the docker CLI's config ${path.join(broken, 'config.json').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} cannot be read: `));
    const ssh = cliDir('far', { far: 'ssh://me@far' });
    expect(() => engineAddress({ DOCKER_CONFIG: ssh })).toThrow('Docker context "far"\'s host "ssh://me@far": ssh:// is not supported here');
  });
});

describe('FrameDemuxer', () => {
  const frame = (type: number, payload: string | Buffer) => {
    const body = Buffer.from(payload);
    const header = Buffer.alloc(8);
    header[0] = type;
    header.writeUInt32BE(body.length, 4);
    return Buffer.concat([header, body]);
  };
  /** The lines of each stream, the bytes pushed in the chunks given (cut at these offsets). */
  const demux = (bytes: Buffer, cuts: number[]) => {
    const lines: Record<FrameStream, string[]> = { stdout: [], stderr: [] };
    const splitters = {
      stdout: new LineSplitter((l) => lines.stdout.push(l.toString())),
      stderr: new LineSplitter((l) => lines.stderr.push(l.toString())),
    };
    const frames = new FrameDemuxer((stream, payload) => splitters[stream].push(payload));
    let from = 0;
    for (const cut of [...cuts, bytes.length]) {
      frames.push(bytes.subarray(from, cut));
      from = cut;
    }
    splitters.stdout.end();
    splitters.stderr.end();
    return lines;
  };

  // Output as a server writes it: a line in two writes, streams interleaved, an empty frame, the daemon's own error.
  const bytes = Buffer.concat([
    frame(1, 'hello '),
    frame(2, 'warn: disk '),
    frame(1, 'world\nsecond line\n'),
    frame(1, ''),
    frame(2, 'low\n'),
    frame(3, 'daemon says no\n'),
    frame(1, 'last, with no newline'),
  ]);
  const expected = { stdout: ['hello world', 'second line', 'last, with no newline'], stderr: ['warn: disk low', 'daemon says no'] };

  it('splits the frames into stdout and stderr lines, in one chunk', () => {
    expect(demux(bytes, [])).toEqual(expected);
  });

  it('the same whatever the chunks: a frame or a header cut anywhere, one byte at a time', () => {
    for (let cut = 1; cut < bytes.length; cut++) expect(demux(bytes, [cut]), `cut at ${cut}`).toEqual(expected);
    // Inside the first header (bytes 0-7), and in the second one (bytes 14-21), and one byte at a time.
    expect(demux(bytes, [3, 17, 19])).toEqual(expected);
    expect(demux(bytes, Array.from({ length: bytes.length - 1 }, (_, i) => i + 1))).toEqual(expected);
  });

  it('a line longer than a log line, in frames of any length and cut in chunks, arrives in pieces of the longest', () => {
    const long = 'x'.repeat(MAX_LOG_LINE_BYTES * 2 + 100);
    const stream = Buffer.concat([frame(1, long.slice(0, 5_000)), frame(1, `${long.slice(5_000)}\nafter\n`), frame(2, 'e\n')]);
    const lines = demux(stream, [4, 9_000, 20_000, 33_000]);
    expect(lines.stdout.map((l) => l.length)).toEqual([MAX_LOG_LINE_BYTES, MAX_LOG_LINE_BYTES, 100, 5]);
    expect(lines.stdout.join('')).toBe(`${long}after`);
    expect(lines.stderr).toEqual(['e']);
  });
});
