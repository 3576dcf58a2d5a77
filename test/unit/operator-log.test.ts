// What a client is told when a store does not answer: a reason in words and a code, never a path, a database's host
// or name, or a bucket's name and keys; the whole error goes to the operator's log, once per store and reason. And
// an internal error: the client gets its ray, the operator's log the error, once per message a minute.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EmulatorError } from '../../src/emulator/errors.js';
import { InternalErrors } from '../../src/emulator/operator-log.js';
import { S3Error, S3Unreachable, bucketUnavailable } from '../../src/emulator/stores/s3-blobs.js';
import { filesUnavailable, postgresUnavailable, publicReason, sqliteUnavailable, tellOperator } from '../../src/emulator/stores/unavailable.js';

const withCode = (message: string, code: string): Error => Object.assign(new Error(message), { code });

describe('the reasons a client reads', () => {
  it('a system error keeps its code and meaning, not its path', () => {
    const err = withCode("EACCES: permission denied, open '/srv/gamehost/data/uploads/1d2e/part-1'", 'EACCES');
    expect(publicReason(err)).toBe('EACCES: permission denied');
    expect(filesUnavailable(err)).toBe('EACCES: permission denied; the emulator must be able to read and write there');
    expect(publicReason(withCode("ENOENT: no such file or directory, access 'C:\\Users\\me\\builds'", 'ENOENT'))).toBe('ENOENT: no such file or directory');
    // Anything else: its code, or nothing of its message.
    expect(publicReason(withCode('could not open /srv/x', 'E_OTHER'))).toBe('E_OTHER');
    expect(publicReason(new Error('/srv/x is gone'))).toBe('an unexpected failure');
    expect(filesUnavailable(withCode('ENOENT: no such file or directory', 'ENOENT'))).toBeUndefined();
  });

  it('PostgreSQL: the kind of failure, without the address or the database', () => {
    const cases: [Error, string][] = [
      [withCode('connect ECONNREFUSED 10.1.2.3:5432', 'ECONNREFUSED'), 'the connection failed (ECONNREFUSED)'],
      [withCode('getaddrinfo ENOTFOUND db.internal.example', 'ENOTFOUND'), 'the connection failed (ENOTFOUND)'],
      [new Error('Query read timeout'), 'no answer in time'],
      [withCode('canceling statement due to statement timeout', '57014'), 'no answer in time'],
      [new Error('Connection terminated unexpectedly'), 'the connection was lost'],
      [withCode('terminating connection due to administrator command', '57P01'), 'the server is shutting down or starting (57P01)'],
      [withCode('sorry, too many clients already', '53300'), 'too many connections (53300)'],
      [withCode('database "studio_staging" does not exist', '3D000'), 'the database does not exist (3D000)'],
    ];
    for (const [err, reason] of cases) expect(postgresUnavailable(err)).toBe(reason);
    // A query's own failure is not the store being unavailable.
    expect(postgresUnavailable(withCode('duplicate key value violates unique constraint "lobbies_pkey"', '23505'))).toBeUndefined();
  });

  it('SQLite: its own message, which names no file', () => {
    expect(sqliteUnavailable(withCode('database is locked', 'SQLITE_BUSY'))).toBe('database is locked (SQLITE_BUSY)');
    expect(sqliteUnavailable(withCode('UNIQUE constraint failed: lobbies.lobby_id', 'SQLITE_CONSTRAINT_PRIMARYKEY'))).toBeUndefined();
  });

  it('a bucket: the status and S3 code, or why it did not answer, without its name, keys or host', () => {
    const where = 'S3 PUT s3://studio-builds/builds/9e225ec3-f589-4c61-8d9b-3f1f00bd1ac4';
    expect(bucketUnavailable(new S3Error(503, 'SlowDown', `${where}: 503 SlowDown: Please reduce your request rate.`))).toBe('503 SlowDown');
    expect(bucketUnavailable(new S3Unreachable(`${where}: no answer within 5000 ms`, 'no answer within 5000 ms'))).toBe('no answer within 5000 ms');
    expect(bucketUnavailable(new S3Error(403, 'AccessDenied', `${where}: 403 AccessDenied`))).toBeUndefined();
  });
});

describe("the operator's log", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('has the whole error, once per store and reason a minute', () => {
    const lines: string[] = [];
    const tell = tellOperator((line) => lines.push(line));
    tell('bucket', 'no answer within 5000 ms', new Error('S3 PUT s3://studio-builds/a: no answer within 5000 ms'));
    tell('bucket', 'no answer within 5000 ms', new Error('S3 PUT s3://studio-builds/b: no answer within 5000 ms'));
    tell('database', 'no answer in time', new Error('Query read timeout'));
    tell('bucket', '503 SlowDown', new Error('S3 PUT s3://studio-builds/c: 503 SlowDown: Please reduce your request rate.'));
    expect(lines).toEqual([
      'the bucket does not answer: S3 PUT s3://studio-builds/a: no answer within 5000 ms',
      'the database does not answer: Query read timeout',
      'the bucket does not answer: S3 PUT s3://studio-builds/c: 503 SlowDown: Please reduce your request rate.',
    ]);
  });

  it('tells an outage that lasts again after a minute', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const lines: string[] = [];
    const tell = tellOperator((line) => lines.push(line));
    const timeout = new Error('Query read timeout');
    tell('database', 'no answer in time', timeout);
    vi.setSystemTime(1_000_000 + 59_000);
    tell('database', 'no answer in time', timeout);
    expect(lines).toHaveLength(1);
    vi.setSystemTime(1_000_000 + 60_000);
    tell('database', 'no answer in time', timeout);
    expect(lines).toHaveLength(2);
  });
});

describe('internal errors', () => {
  it('where and the stack, once per message a minute; never a refusal of the service', () => {
    const lines: string[] = [];
    const internal = new InternalErrors((line) => lines.push(line));
    internal.tell('ray r1', new TypeError("Cannot read properties of undefined (reading 'x')"), 0);
    internal.tell('ray r2', new TypeError("Cannot read properties of undefined (reading 'x')"), 59_999);
    internal.tell('removing expired games', new Error('another'), 59_999);
    internal.tell('ray r4', new TypeError("Cannot read properties of undefined (reading 'x')"), 60_000);
    // The service's own refusals are answers, not defects.
    internal.tell('a sweep', new EmulatorError('STORE_UNAVAILABLE', { store: 'database', reason: 'no answer in time' }), 60_000);
    expect(lines.map((line) => line.split('\n')[0])).toEqual([
      "internal error (ray r1): TypeError: Cannot read properties of undefined (reading 'x')",
      'internal error (removing expired games): Error: another',
      "internal error (ray r4): TypeError: Cannot read properties of undefined (reading 'x')",
    ]);
    expect(lines[0]).toContain('operator-log.test.ts');
  });
});
