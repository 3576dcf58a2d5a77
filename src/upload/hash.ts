import { Worker } from 'node:worker_threads';

// The hash runs on its own thread so the upload's event loop never waits on it; a plain-JS eval worker works
// the same from the compiled CLI and from the test runner. One reused buffer keeps memory flat.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { createHash } = require('node:crypto');
const fd = fs.openSync(workerData.file, 'r');
const buf = Buffer.allocUnsafe(4 * 1024 * 1024);
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
  /**
   * Settles once the worker has loaded what it hashes with. A worker should get there before the process's first
   * request: that loads undici, which changes a V8 flag (src/api/agents.ts), and Node then compiles its own modules
   * without their code cache, so a worker started after it costs 35-60 ms more CPU to start.
   */
  ready: Promise<void>;
  digest: Promise<string>;
}

/**
 * SHA-256 of a file by one sequential read (served from the page cache while the parts upload). The worker is
 * terminated the moment `signal` aborts, and `digest` settles only once the thread is gone.
 */
export function hashFile(file: string, signal?: AbortSignal): FileHash {
  let ready!: () => void;
  const started = new Promise<void>((resolve) => (ready = resolve));
  const digest = new Promise<string>((resolve, reject) => {
    if (signal?.aborted) {
      ready();
      return reject(signal.reason);
    }
    const worker = new Worker(WORKER, { eval: true, workerData: { file } });
    let result: string | undefined;
    let failure: unknown;
    const onAbort = () => {
      failure ??= signal!.reason;
      void worker.terminate();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (m: { ready?: true; digest?: string }) => (m.ready ? ready() : (result = m.digest)));
    worker.once('error', (err) => (failure ??= err));
    worker.once('exit', () => {
      ready();
      signal?.removeEventListener('abort', onAbort);
      if (result !== undefined && failure === undefined) resolve(result);
      else reject(failure ?? new Error('the hash worker stopped without a result'));
    });
  });
  return { ready: started, digest };
}

/** The SHA-256 of `file` (see hashFile). */
export function sha256File(file: string, signal?: AbortSignal): Promise<string> {
  return hashFile(file, signal).digest;
}
