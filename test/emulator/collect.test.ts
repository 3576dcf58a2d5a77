// The idle collection's call (runtime/collect.ts): a real full collection, on the Node running the tests, with no
// `gc` left on the global object (the flag it sets only reaches the context it makes).
import v8 from 'node:v8';
import { expect, it } from 'vitest';
import { collectGarbage } from '../../src/emulator/runtime/collect.js';

it('collects the garbage the process made, and leaves no gc on the global object', () => {
  let garbage: object[] | null = Array.from({ length: 200_000 }, (_, i) => ({ i, s: `x${i}` }));
  const held = v8.getHeapStatistics().used_heap_size;
  garbage = null;
  expect(garbage).toBeNull();
  expect(collectGarbage()).toBe(true);
  // 200,000 objects and strings: several MB, all gone at once rather than at V8's leisure.
  expect(held - v8.getHeapStatistics().used_heap_size).toBeGreaterThan(5 * 1024 * 1024);
  expect(collectGarbage()).toBe(true);
  expect('gc' in globalThis).toBe(false);
});
