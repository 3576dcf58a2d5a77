import { createHash } from 'node:crypto';
import fs from 'node:fs';

/** SHA-256 of a file by one sequential read (served from the page cache while the parts upload). */
export async function sha256File(file: string, signal?: AbortSignal): Promise<string> {
  const hash = createHash('sha256');
  const stream = fs.createReadStream(file, { highWaterMark: 1024 * 1024, signal });
  for await (const chunk of stream) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
