// The Docker Engine API client's two pure parts: DOCKER_HOST read as the docker CLI reads it, and the attach
// stream's 8-byte frame headers undone into stdout and stderr lines, however the bytes are cut into chunks.
import { describe, expect, it } from 'vitest';
import { DEFAULT_SOCKET, engineAddress, FrameDemuxer, type FrameStream } from '../../src/emulator/runtime/engine-api.js';
import { LineSplitter } from '../../src/emulator/runtime/runtime.js';
import { MAX_LOG_LINE_BYTES } from '../../src/emulator/stores/store.js';

describe('engineAddress', () => {
  const at = (DOCKER_HOST?: string, more: Record<string, string> = {}) => engineAddress({ DOCKER_HOST, ...more });
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
