// The transfer display's words: what it says at the end of a transfer, that it moves at a slow rate, and that no
// progress event follows `completing`.
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createContext } from '../../src/context.js';
import { TransferProgress } from '../../src/upload/progress.js';
import { Capture } from '../helpers/cli.js';

function plainProgress() {
  const stderr = new Capture(false, 80);
  const ctx = createContext({ io: { stderr, stdout: new Capture(false, 80) }, env: {} });
  return { progress: new TransferProgress(ctx, 'plain'), stderr };
}

describe('the progress line', () => {
  it('at 100% shows no ETA (never `ETA 0 ms`)', async () => {
    const { progress, stderr } = plainProgress();
    progress.start({ file: 'a.tar', total: 1000, parts: 1 });
    await new Promise((r) => setTimeout(r, 20));
    progress.add(1000);
    progress.completing();
    progress.stop();
    const line = stderr.text.split('\n')[0]!;
    expect(line).toMatch(/^uploading 100\.0% \(1000 B of 1000 B\) at \S+ \S+, 0\/1 parts$/);
    expect(stderr.text).not.toContain('ETA');
  });

  it('before the end, an ETA that is true', async () => {
    const { progress, stderr } = plainProgress();
    progress.start({ file: 'a.tar', total: 1000 });
    await new Promise((r) => setTimeout(r, 20));
    progress.add(500);
    progress.completing();
    progress.stop();
    expect(stderr.text.split('\n')[0]).toMatch(/^uploading 50\.0% \(500 B of 1000 B\) at \S+ \S+, ETA \d+\.\d s$/);
  });
});

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
