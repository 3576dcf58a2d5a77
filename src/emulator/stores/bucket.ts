// Where an S3-compatible bucket is and how to reach it: `s3://bucket[/prefix]` plus the endpoint, region and
// credentials read from the environment as the AWS tools read them. Pure and light: `emulator serve` checks these
// before it starts anything.

export interface BucketSettings {
  bucket: string;
  /** Key prefix, empty or ending in "/". */
  prefix: string;
  /** e.g. https://s3.us-east-1.amazonaws.com, or a MinIO/R2 endpoint; addressed path-style when given. */
  endpoint: string | undefined;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string | undefined;
}

/** S3 takes at least 5 MiB for every part of a multipart upload but the last, and at most 5 GiB. */
export const S3_MIN_PART_SIZE = 5 * 1024 * 1024;
const S3_MAX_PART_SIZE = 5 * 1024 * 1024 * 1024;

/** A bucket the emulator cannot use; the message says why, in one line. */
export class BucketSettingsError extends Error {}

// S3's rules for bucket names, with the underscore some S3-compatible stores allow.
const BUCKET_NAME_RE = /^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$/;

/** `s3://bucket[/prefix]` -> bucket and prefix (empty, or ending in "/"). */
export function parseBucketUrl(raw: string): { bucket: string; prefix: string } {
  const m = /^s3:\/\/([^/]*)(?:\/(.*))?$/.exec(raw);
  if (!m) throw new BucketSettingsError(`"${raw}" is not an s3://bucket[/prefix] URL`);
  const bucket = m[1]!;
  if (!BUCKET_NAME_RE.test(bucket))
    throw new BucketSettingsError(`"${bucket}" is not a bucket name (3 to 63 lowercase letters, digits, ".", "-" or "_")`);
  const prefix = (m[2] ?? '').replace(/^\/+|\/+$/g, '');
  return { bucket, prefix: prefix === '' ? '' : `${prefix}/` };
}

/** The bucket named by `raw` with what the environment says about reaching it. */
export function bucketSettings(raw: string, env: Record<string, string | undefined>): BucketSettings {
  const { bucket, prefix } = parseBucketUrl(raw);
  const endpoint = env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined;
  if (endpoint !== undefined) {
    let url: URL;
    try {
      url = new URL(endpoint);
    } catch {
      throw new BucketSettingsError(`the S3 endpoint "${endpoint}" is not a URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new BucketSettingsError(`the S3 endpoint "${endpoint}" must be http:// or https://`);
  }
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey)
    throw new BucketSettingsError('a bucket needs credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
  return {
    bucket,
    prefix,
    endpoint: endpoint?.replace(/\/+$/, ''),
    region: env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
    accessKeyId,
    secretAccessKey,
    sessionToken: env.AWS_SESSION_TOKEN || undefined,
  };
}

/** The part size a bucket can take (a multipart upload is refused at completion otherwise). */
export function checkBucketPartSize(partSize: number): void {
  if (partSize < S3_MIN_PART_SIZE || partSize > S3_MAX_PART_SIZE)
    throw new BucketSettingsError(
      `a bucket takes parts of 5 MiB to 5 GiB (S3's limits for every part but the last); the part size is ${partSize} bytes`,
    );
}

/** The bucket as `s3://bucket/prefix` with its endpoint, never its credentials: for start lines and logs. */
export function describeBucket(s: BucketSettings): string {
  return `s3://${s.bucket}/${s.prefix}` + (s.endpoint ? ` at ${s.endpoint}` : ` in ${s.region}`);
}
