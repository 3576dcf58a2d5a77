// The BlobStore on an S3-compatible bucket (AWS S3, R2, MinIO, GCS's XML API, Ceph, Garage). A build's bytes go
// to <prefix>builds/<build_id> through a multipart upload: clients PUT each part straight to the bucket on a
// presigned UploadPart URL, `complete` lists the parts (ListParts), completes the upload with their ETags and reads
// the object once for its SHA-256. The multipart upload's S3 id is kept beside it, in <prefix>uploads/<upload_id>,
// so any replica can complete or abort it. Exports are <prefix>exports/<export_id>.csv, fetched on a presigned GET.
// Every request is signed with SigV4 by aws4fetch and sent with the runtime's fetch.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { AwsClient } from 'aws4fetch';
import { DEFAULT_CONFIG } from '../config.js';
import { fail } from '../errors.js';
import { S3_MIN_PART_SIZE, type BucketSettings } from './bucket.js';
import type { BlobStore, BuildRow, ExportFile, GameObjects, NewUpload, ReceivedPart, UploadRow } from './store.js';
import type { Classifier } from './unavailable.js';

/** An S3 error answer: its status and the Code and Message of its XML body. */
export class S3Error extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The bucket did not answer: a network failure, or nothing for longer than the bound. */
export class S3Unreachable extends Error {
  /** `message`: the request and why (the operator's to read); `reason`: why, in words that name no bucket, key or host. */
  constructor(
    message: string,
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The bucket's failures that mean it does not answer: unreachable, or a 5xx still there after aws4fetch's retries. */
export const bucketUnavailable: Classifier = (err) => {
  // In words without the bucket, its keys or its host (those are in the message, for the operator's log).
  if (err instanceof S3Unreachable) return err.reason;
  if (err instanceof S3Error && err.status >= 500) return `${err.status} ${err.code}`;
  return undefined;
};

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** The text of every <tag> element in an S3 answer (flat documents; nothing else is read from them). */
export function xmlValues(xml: string, tag: string): string[] {
  const out: string[] = [];
  for (const m of xml.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g')))
    out.push(m[1]!.replace(/&(amp|lt|gt|quot|apos|#\d+|#x[0-9a-f]+);/gi, (_, e: string) =>
      e[0] === '#' ? String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : Number(e.slice(1))) : XML_ENTITIES[e.toLowerCase()]!,
    ));
  return out;
}

const xmlEscape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
// Read progress is reported once per this many bytes hashed, to keep a long assembly's claim fresh.
const PROGRESS_EVERY = 64 * 1024 * 1024;

/** One signed S3 request: method, object key (or none for the bucket), query and body. */
interface S3Request {
  method: string;
  key?: string;
  query?: Record<string, string>;
  body?: string;
  headers?: Record<string, string>;
}

export class S3BlobStore implements BlobStore {
  private readonly aws: AwsClient;

  /** `timeoutMs`: the longest the bucket may keep a request waiting for its answer, or between two parts of it. */
  constructor(
    private readonly bucket: BucketSettings,
    private readonly timeoutMs: number = DEFAULT_CONFIG.storeTimeoutMs,
  ) {
    // aws4fetch retries 5xx and 429 itself (exponential back-off); network errors surface at once.
    this.aws = new AwsClient({
      accessKeyId: bucket.accessKeyId,
      secretAccessKey: bucket.secretAccessKey,
      sessionToken: bucket.sessionToken,
      service: 's3',
      region: bucket.region,
      retries: 3,
    });
  }

  /** The object's URL: path-style at a given endpoint (as MinIO needs) or for dotted names, else virtual-hosted. */
  private url(key: string | undefined, query: Record<string, string> = {}): URL {
    const { bucket, endpoint, region } = this.bucket;
    const path = key === undefined ? '' : `/${key.split('/').map(encodeURIComponent).join('/')}`;
    const url =
      endpoint !== undefined || bucket.includes('.')
        ? new URL(`${endpoint ?? `https://s3.${region}.amazonaws.com`}/${bucket}${path}`)
        : new URL(`https://${bucket}.s3.${region === 'us-east-1' ? '' : `${region}.`}amazonaws.com${path || '/'}`);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    return url;
  }

  private key(kind: 'builds' | 'uploads' | 'exports', name: string): string {
    return `${this.bucket.prefix}${kind}/${name}`;
  }

  /** Sends one signed request; throws S3Error for an error answer (including S3's 200 with an <Error> body). */
  private async send(r: S3Request): Promise<Response> {
    // A bucket that stops answering (paused, a network that drops packets) fails the request after timeoutMs
    // without a byte, whether it is waiting for the answer or for the next part of its body.
    const controller = new AbortController();
    const stalled = new S3Unreachable(`${this.describe(r)}: no answer within ${this.timeoutMs} ms`, `no answer within ${this.timeoutMs} ms`);
    let timer: NodeJS.Timeout | undefined;
    const rearm = () => {
      clearTimeout(timer);
      // Unref'd: a body nobody reads (an answer whose headers say it all) is dropped when it fires, never waited for.
      timer = setTimeout(() => controller.abort(stalled), this.timeoutMs).unref();
    };
    rearm();
    let res: Response;
    try {
      res = await this.aws.fetch(this.url(r.key, r.query).toString(), { method: r.method, headers: r.headers, body: r.body, signal: controller.signal });
    } catch (err) {
      clearTimeout(timer);
      if (err === stalled) throw stalled;
      // fetch says only "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND, a TLS error) is in its cause.
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const detail = cause?.code ?? cause?.message ?? (err as Error).message;
      throw new S3Unreachable(`${this.describe(r)}: ${detail}`, cause?.code ? `the connection failed (${cause.code})` : 'the connection failed', { cause: err });
    }
    if (res.body === null) clearTimeout(timer);
    else {
      rearm();
      const watched = res.body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, out) {
            rearm();
            out.enqueue(chunk);
          },
          flush: () => clearTimeout(timer),
        }),
      );
      res = new Response(watched, { status: res.status, statusText: res.statusText, headers: res.headers });
    }
    if (res.ok) return res;
    const text = r.method === 'HEAD' ? '' : await res.text();
    const code = xmlValues(text, 'Code')[0] ?? (res.status === 404 ? 'NotFound' : `HTTP${res.status}`);
    const message = xmlValues(text, 'Message')[0] ?? res.statusText;
    throw new S3Error(res.status, code, `${this.describe(r)}: ${res.status} ${code}: ${message}`);
  }

  /** Sends a request whose answer is an XML document, which S3 may fill with an <Error> even after a 200. */
  private async sendXml(r: S3Request): Promise<string> {
    const text = await (await this.send(r)).text();
    if (/^\s*(<\?xml[^>]*>\s*)?<Error>/.test(text)) {
      const code = xmlValues(text, 'Code')[0] ?? 'InternalError';
      throw new S3Error(200, code, `${this.describe(r)}: ${code}: ${xmlValues(text, 'Message')[0] ?? ''}`);
    }
    return text;
  }

  private describe(r: S3Request): string {
    return `S3 ${r.method} s3://${this.bucket.bucket}/${r.key ?? ''}`;
  }

  /** A query-signed URL: no checksum or other header is signed in, only the host, so any client's PUT fits it. */
  async presign(method: string, key: string, query: Record<string, string>, now: number, expiresTs: number): Promise<string> {
    const url = this.url(key, query);
    // S3 takes 1 s to 7 days; the date signed is the emulator's clock, which tests move.
    url.searchParams.set('X-Amz-Expires', String(Math.min(604_800, Math.max(1, Math.ceil((expiresTs - now) / 1000)))));
    const datetime = new Date(now).toISOString().replace(/[:-]|\.\d{3}/g, '');
    const signed = await this.aws.sign(url.toString(), { method, aws: { signQuery: true, datetime } });
    return signed.url;
  }

  /** The S3 id of an upload's multipart upload, or undefined once it was completed or aborted. */
  private async multipartId(uploadId: string): Promise<string | undefined> {
    try {
      return await (await this.send({ method: 'GET', key: this.key('uploads', uploadId) })).text();
    } catch (err) {
      if (err instanceof S3Error && err.status === 404) return undefined;
      throw err;
    }
  }

  async openUpload(_origin: string, upload: NewUpload, now: number, expiresTs: number): Promise<string[]> {
    const key = this.key('builds', upload.build_id);
    const created = await this.sendXml({ method: 'POST', key, query: { uploads: '' } });
    const multipart = xmlValues(created, 'UploadId')[0];
    if (!multipart) throw new Error(`S3 CreateMultipartUpload of ${key} answered no UploadId`);
    await this.send({ method: 'PUT', key: this.key('uploads', upload.upload_id), body: multipart, headers: { 'content-type': 'text/plain' } });
    const urls: string[] = [];
    for (let n = 1; n <= upload.part_count; n++)
      urls.push(await this.presign('PUT', key, { partNumber: String(n), uploadId: multipart }, now, expiresTs));
    return urls;
  }

  async abortUpload(upload: NewUpload): Promise<void> {
    await this.abortMultipart(upload.upload_id, upload.build_id);
  }

  private async abortMultipart(uploadId: string, buildId: string): Promise<void> {
    const multipart = await this.multipartId(uploadId);
    if (multipart !== undefined) {
      try {
        await this.send({ method: 'DELETE', key: this.key('builds', buildId), query: { uploadId: multipart } });
      } catch (err) {
        if (!(err instanceof S3Error && err.status === 404)) throw err;
      }
    }
    await this.deleteObject(this.key('uploads', uploadId));
  }

  /** Every part listed for a multipart upload (ListParts pages through at most 1,000 at a time). */
  private async listParts(key: string, multipart: string): Promise<Map<number, ReceivedPart>> {
    const parts = new Map<number, ReceivedPart>();
    let marker = '0';
    for (;;) {
      const xml = await this.sendXml({ method: 'GET', key, query: { uploadId: multipart, 'part-number-marker': marker } });
      for (const part of xmlValues(xml, 'Part')) {
        const n = Number(xmlValues(part, 'PartNumber')[0]);
        parts.set(n, { size: Number(xmlValues(part, 'Size')[0]), etag: xmlValues(part, 'ETag')[0] ?? '' });
      }
      const next = xmlValues(xml, 'NextPartNumberMarker')[0];
      if (xmlValues(xml, 'IsTruncated')[0] !== 'true' || !next || next === marker) return parts;
      marker = next;
    }
  }

  /** The whole object, when a multipart upload is gone because it was completed (by a replica that then died). */
  private async completedObject(upload: NewUpload): Promise<boolean> {
    try {
      const res = await this.send({ method: 'HEAD', key: this.key('builds', upload.build_id) });
      return Number(res.headers.get('content-length')) === upload.content_length;
    } catch (err) {
      if (err instanceof S3Error && err.status === 404) return false;
      throw err;
    }
  }

  async receivedParts(upload: NewUpload): Promise<Map<number, ReceivedPart>> {
    const multipart = await this.multipartId(upload.upload_id);
    if (multipart !== undefined) {
      try {
        return await this.listParts(this.key('builds', upload.build_id), multipart);
      } catch (err) {
        if (!(err instanceof S3Error && err.code === 'NoSuchUpload')) throw err;
      }
    }
    // Completed already: every part is in the object, as planned.
    const parts = new Map<number, ReceivedPart>();
    if (await this.completedObject(upload))
      for (let n = 1; n <= upload.part_count; n++)
        parts.set(n, { size: Math.min(upload.part_size, upload.content_length - (n - 1) * upload.part_size), etag: '' });
    return parts;
  }

  async assemble(upload: UploadRow, parts: Map<number, ReceivedPart>, progress: () => Promise<void>): Promise<string> {
    const key = this.key('builds', upload.build_id);
    const multipart = await this.multipartId(upload.upload_id);
    if (multipart !== undefined) {
      let body = '<CompleteMultipartUpload>';
      for (let n = 1; n <= upload.part_count; n++)
        body += `<Part><PartNumber>${n}</PartNumber><ETag>${xmlEscape(parts.get(n)?.etag ?? '')}</ETag></Part>`;
      body += '</CompleteMultipartUpload>';
      try {
        await this.sendXml({ method: 'POST', key, query: { uploadId: multipart }, body, headers: { 'content-type': 'application/xml' } });
      } catch (err) {
        if (!(err instanceof S3Error)) throw err;
        if (err.code === 'NoSuchUpload' && (await this.completedObject(upload))) {
          // A replica completed it and died before recording so: the object is whole.
        } else if (['InvalidPart', 'InvalidPartOrder', 'EntityTooSmall'].includes(err.code)) {
          await this.refuseChangedPart(upload, key, multipart, parts, err);
        } else throw err;
      }
      await this.send({ method: 'DELETE', key: this.key('uploads', upload.upload_id) });
    }
    return this.hashObject(upload, key, progress);
  }

  /** S3 refused the parts it listed a moment ago: name the part that changed since (or is too small). */
  private async refuseChangedPart(upload: UploadRow, key: string, multipart: string, listed: Map<number, ReceivedPart>, err: S3Error): Promise<never> {
    const now = await this.listParts(key, multipart);
    for (let n = 1; n <= upload.part_count; n++) {
      const before = listed.get(n);
      const after = now.get(n);
      if (after === undefined || before?.etag !== after.etag)
        fail('UPLOAD_INVALID', { reason: `part ${n} of ${upload.part_count} changed while the upload was completing; complete it again.` }, { part_number: n });
      if (err.code === 'EntityTooSmall' && n < upload.part_count && after.size < S3_MIN_PART_SIZE)
        fail('UPLOAD_INVALID', { reason: `part ${n} of ${upload.part_count} has ${after.size} bytes; the bucket takes at least 5 MiB for every part but the last.` }, { part_number: n });
    }
    fail('UPLOAD_INVALID', { reason: `the bucket refused the parts (${err.code}); upload them again.` });
  }

  /** Reads the object once: its SHA-256, and its length checked against the upload's. */
  private async hashObject(upload: UploadRow, key: string, progress: () => Promise<void>): Promise<string> {
    const res = await this.send({ method: 'GET', key });
    const hash = createHash('sha256');
    let bytes = 0;
    let reported = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      hash.update(chunk);
      bytes += chunk.length;
      if (bytes - reported >= PROGRESS_EVERY) {
        reported = bytes;
        await progress();
      }
    }
    if (bytes !== upload.content_length) throw new Error(`s3://${this.bucket.bucket}/${key} holds ${bytes} bytes; expected ${upload.content_length}`);
    return hash.digest('hex');
  }

  // Exports sit under their game's id, so a deleted game's are found by listing one prefix.
  private exportKey(exportId: string, gameId: string, file: ExportFile): string {
    return this.key('exports', file === 'export.csv' ? `${gameId}/${exportId}.csv` : `${gameId}/${exportId}/${file}`);
  }

  async exportUrl(_origin: string, exportId: string, gameId: string, now: number, expiresTs: number, file: ExportFile = 'export.csv'): Promise<string> {
    return this.presign('GET', this.exportKey(exportId, gameId, file), {}, now, expiresTs);
  }

  async putExport(exportId: string, gameId: string, text: string, _now?: number, _expiresTs?: number, file: ExportFile = 'export.csv'): Promise<void> {
    const type = file === 'export.csv' ? 'text/csv' : 'text/plain';
    await this.send({ method: 'PUT', key: this.exportKey(exportId, gameId, file), body: text, headers: { 'content-type': `${type}; charset=utf-8` } });
  }

  /** Open multipart uploads aborted, builds' objects and markers deleted, the game's exports listed and deleted. */
  async deleteGameObjects(objects: GameObjects): Promise<number> {
    for (const { build_id, upload_id } of objects.builds) {
      await this.abortMultipart(upload_id, build_id);
      await this.deleteObject(this.key('builds', build_id));
    }
    const prefix = this.key('exports', `${objects.game_id}/`);
    let exports = 0;
    let token: string | undefined;
    do {
      const query: Record<string, string> = { 'list-type': '2', prefix };
      if (token !== undefined) query['continuation-token'] = token;
      const xml = await this.sendXml({ method: 'GET', key: undefined, query });
      for (const key of xmlValues(xml, 'Key')) {
        await this.deleteObject(key);
        exports++;
      }
      token = xmlValues(xml, 'IsTruncated')[0] === 'true' ? xmlValues(xml, 'NextContinuationToken')[0] : undefined;
    } while (token !== undefined);
    return exports;
  }

  /** DELETE that finds nothing is done already: a purge taken over runs it again. */
  private async deleteObject(key: string): Promise<void> {
    try {
      await this.send({ method: 'DELETE', key });
    } catch (err) {
      if (!(err instanceof S3Error && err.status === 404)) throw err;
    }
  }

  // Presigned targets: the bucket serves its own URLs, so the emulator's /_upload and /_export routes are not there.
  async checkPresigned(): Promise<void> {
    fail('API_NOT_FOUND', { what: 'This route (the emulator keeps its bytes in a bucket)' });
  }

  async writePart(): Promise<ReceivedPart> {
    fail('API_NOT_FOUND', { what: 'This route (the emulator keeps its bytes in a bucket)' });
  }

  async discardPart(): Promise<void> {
    fail('API_NOT_FOUND', { what: 'This route (the emulator keeps its bytes in a bucket)' });
  }

  async removeLeftovers(): Promise<number> {
    return 0;
  }

  async readBuild(build: Pick<BuildRow, 'build_id' | 'content_length'>): Promise<Readable> {
    const r: S3Request = { method: 'GET', key: this.key('builds', build.build_id) };
    const res = await this.send(r);
    const length = res.headers.get('content-length');
    if (length !== String(build.content_length)) {
      await res.body?.cancel();
      throw new Error(`${this.describe(r)}: ${length ?? 'an unknown number of'} bytes where ${build.content_length} were pushed`);
    }
    return Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>);
  }

  async readExport(): Promise<string | undefined> {
    return undefined;
  }

  async ping(): Promise<void> {
    await this.send({ method: 'HEAD' });
  }
}
