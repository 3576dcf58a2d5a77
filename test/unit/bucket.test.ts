// The bucket store's pure parts: the SigV4 presigning against AWS's published example, where a bucket is reached
// (path-style at an endpoint, virtual-hosted on AWS), and the settings read from --bucket and the AWS variables.
import { describe, expect, it } from 'vitest';
import { BucketSettingsError, bucketSettings, checkBucketPartSize, parseBucketUrl } from '../../src/emulator/stores/bucket.js';
import { S3BlobStore, xmlValues } from '../../src/emulator/stores/s3-blobs.js';

const KEYS = { AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE', AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };

describe('presigned GetObject', () => {
  it("reproduces AWS's published example (Authenticating Requests: Using Query Parameters)", async () => {
    const blobs = new S3BlobStore(bucketSettings('s3://examplebucket', KEYS));
    const now = Date.parse('2013-05-24T00:00:00Z');
    const url = new URL(await blobs.presign('GET', 'test.txt', {}, now, now + 86_400_000));
    expect(url.origin + url.pathname).toBe('https://examplebucket.s3.amazonaws.com/test.txt');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
      'X-Amz-Credential': 'AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request',
      'X-Amz-Date': '20130524T000000Z',
      'X-Amz-Expires': '86400',
      'X-Amz-SignedHeaders': 'host',
      'X-Amz-Signature': 'aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404',
    });
  });
});

describe('--bucket and the AWS variables', () => {
  it('reads s3://bucket[/prefix]', () => {
    expect(parseBucketUrl('s3://games')).toEqual({ bucket: 'games', prefix: '' });
    expect(parseBucketUrl('s3://games/staging/ci/')).toEqual({ bucket: 'games', prefix: 'staging/ci/' });
    for (const bad of ['games', 'https://games', 's3://', 's3://Games', 's3://a'])
      expect(() => parseBucketUrl(bad)).toThrow(BucketSettingsError);
  });

  it('takes the endpoint, region and keys as the AWS tools do, and needs the keys', () => {
    const s = bucketSettings('s3://games/x', {
      ...KEYS,
      AWS_ENDPOINT_URL: 'http://other:1',
      AWS_ENDPOINT_URL_S3: 'http://minio:9000/',
      AWS_DEFAULT_REGION: 'eu-west-1',
      AWS_SESSION_TOKEN: 'tok',
    });
    expect(s).toMatchObject({ bucket: 'games', prefix: 'x/', endpoint: 'http://minio:9000', region: 'eu-west-1', sessionToken: 'tok' });
    expect(bucketSettings('s3://games', { ...KEYS, AWS_REGION: 'auto', AWS_DEFAULT_REGION: 'eu-west-1' }).region).toBe('auto');
    expect(bucketSettings('s3://games', KEYS)).toMatchObject({ endpoint: undefined, region: 'us-east-1', sessionToken: undefined });
    expect(() => bucketSettings('s3://games', { AWS_ACCESS_KEY_ID: 'a' })).toThrow(/AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/);
    expect(() => bucketSettings('s3://games', { ...KEYS, AWS_ENDPOINT_URL: 'minio:9000' })).toThrow(/http:\/\/ or https:\/\//);
  });

  it('refuses a part size S3 cannot complete', () => {
    expect(() => checkBucketPartSize(5 * 1024 * 1024 - 1)).toThrow(/5 MiB to 5 GiB/);
    expect(() => checkBucketPartSize(100 * 1024 * 1024)).not.toThrow();
  });

  it('addresses a bucket path-style at an endpoint (MinIO) and virtual-hosted on AWS', async () => {
    const at = async (env: Record<string, string>, bucket = 'games') =>
      new URL(await new S3BlobStore(bucketSettings(`s3://${bucket}/p`, { ...KEYS, ...env })).presign('PUT', 'p/builds/b', { partNumber: '1', uploadId: 'u' }, 0, 1000));
    expect((await at({ AWS_ENDPOINT_URL: 'http://127.0.0.1:9000' })).href).toMatch(/^http:\/\/127\.0\.0\.1:9000\/games\/p\/builds\/b\?partNumber=1&uploadId=u&/);
    expect((await at({ AWS_REGION: 'eu-west-1' })).href).toMatch(/^https:\/\/games\.s3\.eu-west-1\.amazonaws\.com\/p\/builds\/b\?/);
    // A dotted name would not match the wildcard certificate of the virtual host.
    expect((await at({ AWS_REGION: 'us-east-1' }, 'my.games')).href).toMatch(/^https:\/\/s3\.us-east-1\.amazonaws\.com\/my\.games\/p\/builds\/b\?/);
  });
});

describe('reading S3 answers', () => {
  it('takes element text by name, entities decoded', () => {
    const xml = '<ListPartsResult><Part><PartNumber>1</PartNumber><ETag>&quot;a&amp;b&quot;</ETag></Part><Part><ETag>"c"</ETag></Part></ListPartsResult>';
    expect(xmlValues(xml, 'ETag')).toEqual(['"a&b"', '"c"']);
    expect(xmlValues(xml, 'Part')).toHaveLength(2);
    expect(xmlValues(xml, 'UploadId')).toEqual([]);
  });
});
