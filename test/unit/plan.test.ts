import { describe, expect, it } from 'vitest';
import { partsFrom } from '../../src/upload/plan.js';

const req = (byte_offset: number, content_length: number) => ({ path: 'f', url: `http://x/${byte_offset}`, byte_offset, content_length });

describe('partsFrom', () => {
  it('takes the multipart array, in offset order', () => {
    const parts = partsFrom({ build_id: 'b', upload_id: 'u', image_presigned_requests: [req(10, 5), req(0, 10)] }, 15);
    expect(parts.map((p) => [p.number, p.offset, p.length])).toEqual([[1, 0, 10], [2, 10, 5]]);
  });
  it('takes the older single presigned request', () => {
    const parts = partsFrom({ build_id: 'b', upload_id: 'u', image_presigned_request: req(0, 42) }, 42);
    expect(parts).toEqual([{ number: 1, url: 'http://x/0', offset: 0, length: 42 }]);
  });
  it('refuses a plan that leaves a gap or does not cover the file', () => {
    expect(() => partsFrom({ build_id: 'b', upload_id: 'u', image_presigned_requests: [req(0, 5), req(6, 5)] }, 11)).toThrow(/part 2 starts at byte 6/);
    expect(() => partsFrom({ build_id: 'b', upload_id: 'u', image_presigned_requests: [req(0, 5)] }, 6)).toThrow(/cover 5 bytes/);
    expect(() => partsFrom({ build_id: 'b', upload_id: 'u' }, 6)).toThrow(/no upload URL/);
  });
});
