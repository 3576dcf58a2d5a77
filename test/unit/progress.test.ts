// The upload's JSON progress events: once the transfer is over, no progress event follows `completing`.
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createContext } from '../../src/context.js';
import { TransferProgress } from '../../src/upload/progress.js';

describe('TransferProgress --progress json', () => {
  afterEach(() => vi.useRealTimers());

  it('emits no progress event after completing, however long the completion takes', async () => {
    vi.useFakeTimers();
    let text = '';
    const stderr = new Writable({
      write(chunk, _enc, done) {
        text += String(chunk);
        done();
      },
    });
    const ctx = createContext({ io: { stderr } });
    const progress = new TransferProgress(ctx, 'json');
    await progress.open();
    progress.start({ file: 'build.tar', total: 10 });
    progress.add(10);
    vi.advanceTimersByTime(1_500);
    progress.completing();
    vi.advanceTimersByTime(10_000);
    const types = text.trim().split('\n').map((l) => (JSON.parse(l) as { type: string }).type);
    expect(types).toContain('progress');
    expect(types.at(-1)).toBe('completing');
  });
});
