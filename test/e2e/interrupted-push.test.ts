// Ctrl-C and SIGTERM at each point of a real push whose stderr is a pipe (a CI log): the error line and the way
// on are the last lines written, whether the signal comes once or twice (`timeout` sends it to the command and
// to its process group: twice within microseconds), while the build is created, between parts, or while the
// upload completes.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, tempDir } from '../helpers/cli.js';
import { BIN } from '../helpers/bin.js';

const PART = 64 * 1024;

type Signal = 'SIGINT' | 'SIGTERM';

/** Pushes a 4-part file; when stderr shows `when`, sends `signal` `times` times in a row. */
function interruptedPush(tag: string, when: RegExp, signal: Signal, times: number, faults = '') {
  const env = isolatedEnv({}, { partSize: PART, singlePartMax: 32 * 1024, startDelayMs: 0, readyDelayMs: 0 });
  const file = path.join(tempDir(), 'server.tar');
  fs.writeFileSync(file, crypto.randomBytes(4 * PART));
  const child = spawn(process.execPath, [BIN, 'build', 'push', file, '--tag', tag, '--limit-rate', '96K'], {
    env: { PATH: process.env.PATH, ...env, ...(faults ? { GAMEHOST_EMULATOR_FAULTS: faults } : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let sent = false;
  child.stderr!.on('data', (c: Buffer) => {
    stderr += c.toString();
    if (!sent && when.test(stderr)) {
      sent = true;
      for (let i = 0; i < times; i++) child.kill(signal);
    }
  });
  // A push still running 15 s on (one signalled took 3-7 s here) is killed, and the test fails on its exit code
  // with what it wrote: one run in some fifty never ended (SIGTERM x2 while the upload completes), and said nothing.
  const hung = setTimeout(() => child.kill('SIGKILL'), 15_000);
  return new Promise<{ code: number | null; lines: string[]; sent: boolean }>((resolve) =>
    child.once('close', (code, killedBy) => {
      clearTimeout(hung);
      resolve({ code: code ?? (killedBy === 'SIGKILL' ? -9 : null), lines: stderr.trimEnd().split('\n'), sent });
    }),
  );
}

const POINTS = [
  // The create request is held by the emulator for 3 s: the build may or may not exist when the signal comes.
  { name: 'while the build is created', when: /^Creating build/m, faults: 'latency=3s', hint: /^ {2}run the same command again to (start over \(should it say \S+ is taken, the interrupted push holds it: use --tag \S+\)|resume: 0 of 4 parts are up)$/ },
  { name: 'between parts', when: /^part 1 done/m, faults: '', hint: /^ {2}run the same command again to resume: [1-4] of 4 parts are up$/ },
  { name: 'while the upload completes', when: /^completing the upload…$/m, faults: 'assembly-delay=2s', hint: /^ {2}run the same command again to resume: 4 of 4 parts are up$/ },
];

// The nine at once: each spends its seconds waiting (the held create, the rate limit, the held assembly), not on CPU.
describe.concurrent('an interrupted push through a pipe ends with the error line and the way on', () => {
  let n = 0;
  for (const point of POINTS) {
    for (const [signal, times] of [['SIGINT', 1], ['SIGINT', 2], ['SIGTERM', 2]] as const) {
      it(`${signal} ×${times} ${point.name}`, async () => {
        const r = await interruptedPush(`game:int-${++n}`, point.when, signal, times, point.faults);
        expect(r.sent).toBe(true);
        expect(r.code, r.lines.join('\n')).toBe(signal === 'SIGINT' ? 130 : 143);
        expect(r.lines.at(-2)).toBe(signal === 'SIGINT' ? 'error: interrupted' : 'error: terminated');
        expect(r.lines.at(-1)).toMatch(point.hint);
      });
    }
  }
});
