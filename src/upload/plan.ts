// The parts of an upload, as the service laid them out in its presigned requests.
import type { CreateBuildResponse } from '../api/types.js';
import { UploadError } from '../errors.js';
import { checkServiceUrl } from '../api/transport.js';

export interface Part {
  /** 1-based, in file order. */
  number: number;
  url: string;
  offset: number;
  length: number;
}

/** S3's limit on the parts of one multipart upload. */
export const MAX_PARTS = 10_000;

const badPlan = (what: string) => new UploadError(`the service's upload plan is unusable: ${what}`, 'nothing was sent; report this to the service if it persists');

/**
 * Reads either form the service answers with (`image_presigned_requests`, or the older single
 * `image_presigned_request`) and checks the plan before anything relies on it: parts contiguous from byte 0,
 * lengths adding up to the file, every URL absolute http(s), at most 10,000 parts. A bad plan fails with exit 7.
 */
export function partsFrom(res: CreateBuildResponse, size: number): Part[] {
  const requests = res.image_presigned_requests?.length
    ? res.image_presigned_requests
    : res.image_presigned_request
      ? [res.image_presigned_request]
      : [];
  if (requests.length === 0) throw badPlan('it holds no upload URL');
  if (requests.length > MAX_PARTS) throw badPlan(`${requests.length} parts, more than ${MAX_PARTS}`);
  const parts = [...requests]
    .sort((a, b) => a.byte_offset - b.byte_offset)
    .map((r, i) => ({ number: i + 1, url: r.url, offset: r.byte_offset, length: r.content_length }));
  let next = 0;
  for (const p of parts) {
    if (!Number.isSafeInteger(p.offset) || !Number.isSafeInteger(p.length) || p.length <= 0) {
      throw badPlan(`part ${p.number} has byte_offset ${p.offset} and content_length ${p.length}`);
    }
    if (p.offset !== next) throw badPlan(`part ${p.number} starts at byte ${p.offset}, expected ${next}`);
    checkServiceUrl(`part ${p.number} url`, p.url, (m) => badPlan(m.replace(/^the service's /, '')));
    next += p.length;
  }
  if (next !== size) throw badPlan(`its parts cover ${next} bytes but the file has ${size}`);
  return parts;
}

/** The service's layout (SERVICE-FACTS): one part below 5 MiB, else 100 MiB parts, the last one shorter. */
export const SERVICE_PART_SIZE = 100 * 1024 * 1024;
export const SERVICE_SINGLE_PART_MAX = 5 * 1024 * 1024;

export function expectedParts(size: number): { offset: number; length: number }[] {
  if (size < SERVICE_SINGLE_PART_MAX) return [{ offset: 0, length: size }];
  const parts: { offset: number; length: number }[] = [];
  for (let offset = 0; offset < size; offset += SERVICE_PART_SIZE) {
    parts.push({ offset, length: Math.min(SERVICE_PART_SIZE, size - offset) });
  }
  return parts;
}
