// Asking the user for secrets: a hidden prompt on a terminal (nothing echoed), or lines read from a piped stdin.
// A command asks only when stdin is a terminal and --no-input was not given; otherwise it says which flag to pass.
import type { BaseContext } from '../base-context.js';
import { InterruptedError, UsageError } from '../errors.js';

/** Throws a usage error naming `instead` when the command may not prompt. */
export function assertCanPrompt(ctx: BaseContext, what: string, instead: string): void {
  if (!ctx.global.input) {
    throw new UsageError(`${what} would need a prompt, and --no-input forbids prompts`, `pass ${instead}`);
  }
  if (ctx.io.stdin.isTTY !== true) {
    throw new UsageError(`${what} would need a prompt, and stdin is not a terminal`, `pass ${instead}`);
  }
}

// Arrow keys and other terminal sequences typed at a hidden prompt are ignored, not taken as text.
// eslint-disable-next-line no-control-regex
const KEY_SEQUENCE = /\x1b(?:\[[0-9;?]*[ -/]*[@-~]|O.|.)?/g;

/**
 * Asks each question on stderr and reads one line per question from a terminal stdin in raw mode, echoing
 * nothing. Ctrl-C interrupts (exit 130); Ctrl-D or the end of input before all answers is a usage error.
 */
export function promptHidden(ctx: BaseContext, questions: string[]): Promise<string[]> {
  const { stdin, stderr } = ctx.io;
  const answers: string[] = [];
  let line = '';
  let afterCR = false;
  return new Promise<string[]>((resolve, reject) => {
    const finish = (err?: Error) => {
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      ctx.signal.removeEventListener('abort', onAbort);
      stdin.setRawMode?.(false);
      stdin.pause();
      if (err) reject(err);
      else resolve(answers);
    };
    const onData = (chunk: Buffer | string) => {
      for (const ch of String(chunk).replace(KEY_SEQUENCE, '')) {
        if (ch === '\n' && afterCR) {
          afterCR = false;
          continue;
        }
        afterCR = ch === '\r';
        if (ch === '\r' || ch === '\n') {
          stderr.write('\n');
          answers.push(line.trim());
          line = '';
          if (answers.length === questions.length) return finish();
          stderr.write(questions[answers.length]!);
        } else if (ch === '\x03') {
          stderr.write('\n');
          return finish(new InterruptedError('SIGINT'));
        } else if (ch === '\x04') {
          stderr.write('\n');
          return finish(new UsageError('input ended before every answer was given'));
        } else if (ch === '\x7f' || ch === '\b') {
          line = Array.from(line).slice(0, -1).join('');
        } else if (ch >= ' ') {
          line += ch;
        }
      }
    };
    const onEnd = () => finish(new UsageError('input ended before every answer was given'));
    const onAbort = () => finish(ctx.signal.reason as Error);
    stdin.setRawMode?.(true);
    stdin.on('data', onData);
    stdin.once('end', onEnd);
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    stderr.write(questions[0]!);
    stdin.resume();
  });
}

const MAX_STDIN = 64 * 1024;

/** Reads all of stdin (a pipe, a here-string) as lines, without trailing empty ones. */
export async function readStdinLines(ctx: BaseContext): Promise<string[]> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.io.stdin) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buf.length;
    if (size > MAX_STDIN) throw new UsageError(`stdin holds more than ${MAX_STDIN / 1024} KiB; expected tokens, one a line`);
    chunks.push(buf);
  }
  const lines = Buffer.concat(chunks).toString('utf8').split(/\r?\n/).map((l) => l.trim());
  while (lines.length && lines.at(-1) === '') lines.pop();
  return lines;
}
