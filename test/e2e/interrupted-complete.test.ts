// Ctrl-C while the embedded emulator assembles an upload, then the same push again: the claim of the process that
// is gone lapses within seconds, a complete that meets a live claim is answered at once, and the CLI says it waits.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, tempDir } from '../helpers/cli.js';
import { BIN } from '../helpers/bin.js';

const PART = 64 * 1024;

const events = (stderr: string): Record<string, any>[] => stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));

/** Runs the real bin; `onStderr` sees all of stderr so far after each chunk and may act on the child. */
function run(args: string[], env: NodeJS.ProcessEnv, onStderr?: (text: string, child: ReturnType<typeof spawn>) => void) {
  const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => {
    stderr += c.toString();
    onStderr?.(stderr, child);
  });
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

describe('Ctrl-C during `completing the upload…` with the embedded emulator', () => {
  it('the next push waits for the interrupted completion to lapse, says so, and finishes within 15 s', async () => {
    const env = isolatedEnv({}, { partSize: PART, singlePartMax: 32 * 1024, startDelayMs: 0, readyDelayMs: 0 });
    const file = path.join(tempDir(), 'server.tar');
    fs.writeFileSync(file, crypto.randomBytes(4 * PART));
    const args = ['build', 'push', file, '--tag', 'game:interrupted', '--progress', 'json', '--json'];

    // Each part's assembly takes 2 s more: the completion is under way for 8 s, long enough to interrupt.
    let sent = false;
    const first = await run(args, { ...env, GAMEHOST_EMULATOR_FAULTS: 'assembly-delay=2s' }, (text, child) => {
      if (!sent && events(text).some((e) => e.type === 'completing')) {
        sent = true;
        // The complete request is on its way once the hash is in (a few ms for 256 KiB): let it claim the upload.
        setTimeout(() => child.kill('SIGINT'), 700);
      }
    });
    expect(first.code).toBe(130);
    expect(first.stdout).toBe('');

    const second = await run(args, env);
    expect(second.code).toBe(0);
    const seen = events(second.stderr);
    const resumed = seen.find((e) => e.type === 'resume');
    expect(resumed).toMatchObject({ done_parts: 4, parts: 4 });
    // The push's own clock, from resuming to done (a loaded machine's process start is not the push's stall):
    // about 5 s for the claim to lapse, then the assembly. The stall was 3 minutes.
    const took = Date.parse(seen.find((e) => e.type === 'complete')!.time) - Date.parse(resumed!.time);
    expect(took).toBeLessThan(15_000);
    // Whether the interrupted claim was still live when this push asked (it then says it waits) depends on how soon
    // this process started; either way the push finishes, and says nothing untrue.
    for (const e of seen.filter((e) => e.type === 'waiting')) expect(e.message).toBe('another completion of this upload is in progress; waiting');
    // No retry of the complete call, and no cause that was not the cause.
    expect(seen.filter((e) => e.type === 'retry')).toEqual([]);
    expect(second.stderr).not.toMatch(/no answer in time|HEADERS_TIMEOUT/);
    const result = JSON.parse(second.stdout);
    expect(result.sha256).toBe(crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex'));

    const listed = await run(['emulator', 'builds', '--json'], env);
    expect(JSON.parse(listed.stdout).builds.find((b: { build_id: string }) => b.build_id === result.build_id)).toMatchObject({ complete: true });
  }, 120_000);
});
