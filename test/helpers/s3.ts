// S3-compatible servers for the bucket store's tests. No npm package is a whole S3, so each test uses what each
// does: moto_server (Python; ListParts, S3's multipart ETags, EntityTooSmall, InvalidPart; no signature or expiry
// checks) and s3rver (npm; presigned UploadPart/PutObject/GetObject, S3's 403 XML for an expired URL; no ListParts).
// Where moto_server is missing the tests that need it are skipped and say so; under CI they fail instead.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { AwsClient } from 'aws4fetch';
import { isCI } from '../../src/output/ci.js';
import type { BucketSettings } from '../../src/emulator/index.js';
import { tempDir } from './cli.js';

export const BUCKET = 'gamehost-test';
export const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_REGION: 'us-east-1' };

function onPath(cmd: string): boolean {
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => dir && fs.existsSync(path.join(dir, cmd)));
}

export const MOTO_PRESENT = onPath('moto_server');
if (!MOTO_PRESENT) {
  if (isCI(process.env)) throw new Error('bucket tests cannot run: moto_server is not installed, and in CI it must be (pip install "moto[server]")');
  console.warn('bucket tests against moto_server skipped: it is not installed (pip install "moto[server]")');
}

export interface S3Server {
  endpoint: string;
  close(): Promise<void>;
}

/** moto_server on loopback on a port of its choosing; it prints the address it listens on. */
export async function startMoto(): Promise<S3Server> {
  const child = spawn('moto_server', ['-H', '127.0.0.1', '-p', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const endpoint = await new Promise<string>((resolve, reject) => {
    let seen = '';
    const look = (line: string) => {
      seen += line + '\n';
      const m = /Running on (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
      if (m) resolve(m[1]!);
    };
    readline.createInterface({ input: child.stdout! }).on('line', look);
    readline.createInterface({ input: child.stderr! }).on('line', look);
    child.once('error', reject);
    void exited.then(() => reject(new Error(`moto_server exited before listening: ${seen}`)));
  });
  return {
    endpoint,
    async close() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** s3rver in this process, on a port of its choosing, with the test bucket made. */
export async function startS3rver(): Promise<S3Server> {
  // @ts-expect-error s3rver ships no types
  const { default: S3rver } = (await import('s3rver')) as { default: new (o: object) => { run(): Promise<{ address: string; port: number }>; close(): Promise<void> } };
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: tempDir('gamehost-s3rver-'), configureBuckets: [{ name: BUCKET }] });
  const { port } = await server.run();
  return { endpoint: `http://127.0.0.1:${port}`, close: () => server.close() };
}

/** The settings `emulator serve --bucket` would read from this environment. */
export function bucketAt(endpoint: string, prefix = ''): BucketSettings {
  return { bucket: BUCKET, prefix, endpoint, region: 'us-east-1', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', sessionToken: undefined };
}

/** A signed request to the bucket, as the tests' own S3 client. */
export function s3(endpoint: string, method: string, key = '', body?: string | Buffer): Promise<Response> {
  const aws = new AwsClient({ accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', service: 's3', region: 'us-east-1', retries: 0 });
  return aws.fetch(`${endpoint}/${BUCKET}${key ? `/${key}` : ''}`, { method, body });
}

export async function createBucket(endpoint: string): Promise<void> {
  const res = await s3(endpoint, 'PUT');
  if (!res.ok) throw new Error(`create bucket: ${res.status} ${await res.text()}`);
}
