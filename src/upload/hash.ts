import fs from 'node:fs';
import { Worker } from 'node:worker_threads';
import { readBuffer } from '../shared/read-buffer.js';

// The hash runs on its own thread so the upload's event loop never waits on it; a plain-JS eval worker works
// the same from the compiled CLI and from the test runner. One reused buffer keeps memory flat: a readBuffer, its
// memory moved to the worker (not copied) with where in it the buffer starts.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { createHash } = require('node:crypto');
const fd = fs.openSync(workerData.file, 'r');
const buf = Buffer.from(workerData.memory, workerData.offset, workerData.length);
const hash = createHash('sha256');
parentPort.postMessage({ ready: true });
for (;;) {
  const n = fs.readSync(fd, buf, 0, buf.length, null);
  if (n === 0) break;
  hash.update(buf.subarray(0, n));
}
fs.closeSync(fd);
parentPort.postMessage({ digest: hash.digest('hex') });
`;

export interface FileHash {
  /** The file, and its size and modification time as the hash began: its digest is of the bytes a push sends only
   * while these are still what the push stats (sameBytes). */
  file: string;
  size: number;
  mtimeMs: number;
  /**
   * Settles once the worker has loaded what it hashes with. A worker should get there before the process's first
   * request: that loads undici, which changes a V8 flag (src/api/agents.ts), and Node then compiles its own modules
   * without their code cache, so a worker started after it costs 35-60 ms more CPU to start.
   */
  ready: Promise<void>;
  digest: Promise<string>;
  /** Terminates the worker (as an abort of the signal does); `digest` settles once the thread is gone. */
  stop(reason?: unknown): void;
}

/**
 * SHA-256 of a file by one sequential read (served from the page cache while the parts upload). The worker is
 * terminated the moment `signal` aborts or stop() is called, and `digest` settles only once the thread is gone.
 */
export function hashFile(file: string, signal?: AbortSignal): FileHash {
  let size = -1;
  let mtimeMs = -1;
  let regular = true;
  try {
    const stat = fs.statSync(file);
    ({ size, mtimeMs } = stat);
    regular = stat.isFile();
  } catch {
    // The worker's open says what is wrong, through `digest`.
  }
  const stopper = new AbortController();
  const stopped = signal === undefined ? stopper.signal : AbortSignal.any([signal, stopper.signal]);
  let ready!: () => void;
  const started = new Promise<void>((resolve) => (ready = resolve));
  const digest = new Promise<string>((resolve, reject) => {
    if (stopped.aborted || !regular) {
      ready();
      // A directory (build push packs it into a tar, which is hashed instead): no thread for it.
      return reject(regular ? stopped.reason : new Error(`${file}: not a regular file`));
    }
    const buf = readBuffer(4 * 1024 * 1024);
    const worker = new Worker(WORKER, {
      eval: true,
      workerData: { file, memory: buf.buffer, offset: buf.byteOffset, length: buf.length },
      transferList: [buf.buffer],
    });
    let result: string | undefined;
    let failure: unknown;
    const onAbort = () => {
      failure ??= stopped.reason;
      void worker.terminate();
    };
    stopped.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (m: { ready?: true; digest?: string }) => (m.ready ? ready() : (result = m.digest)));
    worker.once('error', (err) => (failure ??= err));
    worker.once('exit', () => {
      ready();
      stopped.removeEventListener('abort', onAbort);
      if (result !== undefined && failure === undefined) resolve(result);
      else reject(failure ?? new Error('the hash worker stopped without a result'));
    });
  });
  return { file, size, mtimeMs, ready: started, digest, stop: (reason = new Error('the hash was stopped')) => stopper.abort(reason) };
}

/** Whether `hash` is of the bytes `input` holds: the same file, not changed since the hash began. */
export function sameBytes(hash: FileHash, input: { file: string; size: number; mtimeMs: number }): boolean {
  return hash.file === input.file && hash.size === input.size && hash.mtimeMs === input.mtimeMs;
}
