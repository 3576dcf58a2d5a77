// The transfer display's words: what it says at the end of a transfer, and that it moves at a slow rate.
import { describe, expect, it } from 'vitest';
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
