// The upload's hash worker: its `ready` comes before its digest and settles on every path (the session waits on it
// before its first request), the digest is the file's, and a hash begun early is used only for the same bytes.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hashFile, sameBytes } from '../../src/upload/hash.js';
import { tempDir } from '../helpers/cli.js';

describe('hashFile', () => {
  it('is ready before it has read the file, then gives its SHA-256', async () => {
    const file = path.join(tempDir(), 'build.tar');
    const bytes = crypto.randomBytes(9 * 1024 * 1024 + 3);
    fs.writeFileSync(file, bytes);
    const order: string[] = [];
    const hash = hashFile(file);
    await Promise.all([hash.ready.then(() => order.push('ready')), hash.digest.then(() => order.push('digest'))]);
    expect(order).toEqual(['ready', 'digest']);
    expect(await hash.digest).toBe(crypto.createHash('sha256').update(bytes).digest('hex'));
  });

  it('settles ready when the worker fails or is stopped, so nothing waits on it forever', async () => {
    const missing = hashFile(path.join(tempDir(), 'nowhere.tar'));
    await missing.ready;
    await expect(missing.digest).rejects.toThrow(/ENOENT/);

    const file = path.join(tempDir(), 'big.tar');
    fs.writeFileSync(file, Buffer.alloc(64 * 1024 * 1024));
    const controller = new AbortController();
    const stopped = hashFile(file, controller.signal);
    controller.abort(new Error('stopped'));
    await stopped.ready;
    await expect(stopped.digest).rejects.toThrow('stopped');
    const before = hashFile(file, controller.signal);
    await before.ready;
    await expect(before.digest).rejects.toThrow('stopped');
    const folder = hashFile(tempDir());
    await folder.ready;
    await expect(folder.digest).rejects.toThrow(/not a regular file$/);
    const dropped = hashFile(file);
    dropped.stop();
    await dropped.ready;
    await expect(dropped.digest).rejects.toThrow('the hash was stopped');
  });

  it('says whether it is of the bytes a push sends: the same file, its size and time as when it began', async () => {
    const file = path.join(tempDir(), 'build.tar');
    fs.writeFileSync(file, 'one');
    const hash = hashFile(file);
    await hash.digest;
    const stat = fs.statSync(file);
    expect(sameBytes(hash, { file, size: stat.size, mtimeMs: stat.mtimeMs })).toBe(true);
    expect(sameBytes(hash, { file: `${file}.lz4`, size: stat.size, mtimeMs: stat.mtimeMs })).toBe(false);
    // Written again after the hash began: the same size, a later time.
    fs.utimesSync(file, stat.atime, new Date(stat.mtimeMs + 1000));
    const now = fs.statSync(file);
    expect(sameBytes(hash, { file, size: now.size, mtimeMs: now.mtimeMs })).toBe(false);
  });
});
