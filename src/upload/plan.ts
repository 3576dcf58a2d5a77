// The parts of an upload, as the service laid them out in its presigned requests.
import type { CreateBuildResponse } from '../api/types.js';
import { UploadError } from '../errors.js';

export interface Part {
  /** 1-based, in file order. */
  number: number;
  url: string;
  offset: number;
  length: number;
}

/**
 * Reads either form the service answers with (`image_presigned_requests`, or the older single
 * `image_presigned_request`) and checks the parts cover the file exactly, so a bad plan fails before any byte.
 */
export function partsFrom(res: CreateBuildResponse, size: number): Part[] {
  const requests = res.image_presigned_requests?.length
    ? res.image_presigned_requests
    : res.image_presigned_request
      ? [res.image_presigned_request]
      : [];
  if (requests.length === 0) throw new UploadError('the service returned no upload URL for the build');
  const parts = [...requests]
    .sort((a, b) => a.byte_offset - b.byte_offset)
    .map((r, i) => ({ number: i + 1, url: r.url, offset: r.byte_offset, length: r.content_length }));
  let next = 0;
  for (const p of parts) {
    if (p.offset !== next || p.length <= 0) {
      throw new UploadError(`the service's upload plan does not match the file: part ${p.number} starts at byte ${p.offset}, expected ${next}`);
    }
    next += p.length;
  }
  if (next !== size) {
    throw new UploadError(`the service's upload plan covers ${next} bytes but the file has ${size}`);
  }
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
