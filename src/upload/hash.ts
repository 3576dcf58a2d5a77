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
for (;;) {
  const n = fs.readSync(fd, buf, 0, buf.length, null);
  if (n === 0) break;
  hash.update(buf.subarray(0, n));
}
fs.closeSync(fd);
parentPort.postMessage(hash.digest('hex'));
`;

/**
 * SHA-256 of a file by one sequential read (served from the page cache while the parts upload). The worker is
 * terminated the moment `signal` aborts, and the promise settles only once the thread is gone.
 */
export function sha256File(file: string, signal?: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const worker = new Worker(WORKER, { eval: true, workerData: { file } });
    let digest: string | undefined;
    let failure: unknown;
    const onAbort = () => {
      failure ??= signal!.reason;
      void worker.terminate();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.once('message', (d: string) => (digest = d));
    worker.once('error', (err) => (failure ??= err));
    worker.once('exit', () => {
      signal?.removeEventListener('abort', onAbort);
      if (digest !== undefined && failure === undefined) resolve(digest);
      else reject(failure ?? new Error('the hash worker stopped without a result'));
    });
  });
}
