// Presigned URLs on the emulator itself (uploads and exports), like S3's: no bearer token, an expiry and a signature.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { fail } from '../errors.js';

function signature(secret: Buffer, method: string, path: string, expires: number): string {
  return createHmac('sha256', secret).update(`${method}\n${path}\n${expires}`).digest('base64url');
}

/** Path plus query (`?expires=<ms>&sig=<b64url>`), relative to the endpoint; method is part of what is signed. */
export function presignPath(secret: Buffer, method: string, path: string, expiresMs: number): string {
  return `${path}?expires=${expiresMs}&sig=${signature(secret, method, path, expiresMs)}`;
}

/** Throws PRESIGN_INVALID on a missing or wrong signature and PRESIGN_EXPIRED after the expiry. */
export function checkPresigned(
  secret: Buffer,
  method: string,
  path: string,
  query: URLSearchParams,
  nowMs: number,
): void {
  const expiresText = query.get('expires') ?? '';
  const sig = query.get('sig') ?? '';
  // One spelling of each: no leading zeros in the expiry (the signature is compared as the text it was issued as).
  if (!/^(0|[1-9]\d{0,15})$/.test(expiresText) || sig === '' || query.getAll('expires').length !== 1 || query.getAll('sig').length !== 1)
    fail('PRESIGN_INVALID');
  const expires = Number(expiresText);
  const expected = Buffer.from(signature(secret, method, path, expires));
  const given = Buffer.from(sig);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) fail('PRESIGN_INVALID');
  if (nowMs > expires) fail('PRESIGN_EXPIRED', { expires: new Date(expires).toISOString() });
}
