// Runs the CLI in-process, as a user would from a shell, with injected streams and environment.
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { syncBuiltinESMExports } from 'node:module';
import threads from 'node:worker_threads';
import { main } from '../../src/cli.js';
import { CsvStreamParser } from '../../src/output/csv.js';
import type { Env } from '../../src/shared/io.js';
import { expect, inject } from 'vitest';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

// eslint-disable-next-line no-control-regex
const SGR = /\x1b\[[0-9;]*m/g;

/** Output as a person reads it: colour removed (rendering tests compare text, and check colour separately). */
export function plain(text: string): string {
  return text.replace(SGR, '');
}

export interface RunOptions {
  env?: Env;
  /** stdout and stderr are terminals. */
  tty?: boolean;
  columns?: number;
  cwd?: string;
  stdin?: string | Buffer;
  signal?: AbortSignal;
  retry?: { attempts: number; baseMs: number; maxMs: number };
  /** Called with all of stdout so far after each write: act on what the command has shown, not after a sleep. */
  onStdout?: (text: string) => void;
}

/** A stdout or stderr that keeps what was written, and is a terminal when asked to be. */
export class Capture extends Writable {
  text = '';
  onWrite?: (text: string) => void;
  constructor(
    readonly isTTY: boolean,
    /** Changeable, with a 'resize' event, as a terminal's is. */
    public columns: number,
  ) {
    super();
  }
  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: () => void): void {
    this.text += chunk.toString();
    this.onWrite?.(this.text);
    cb();
  }
  // What a terminal's WriteStream offers, for spinners and in-place redraws.
  cursorTo(x: number, y?: number | (() => void), cb?: () => void): boolean {
    if (typeof y === 'function') cb = y;
    return this.write(typeof y === 'number' ? `\x1b[${y + 1};${x + 1}H` : `\x1b[${x + 1}G`, cb);
  }
  moveCursor(dx: number, dy: number, cb?: () => void): boolean {
    const h = dx < 0 ? `\x1b[${-dx}D` : dx > 0 ? `\x1b[${dx}C` : '';
    const v = dy < 0 ? `\x1b[${-dy}A` : dy > 0 ? `\x1b[${dy}B` : '';
    return this.write(h + v, cb);
  }
  clearLine(dir: number, cb?: () => void): boolean {
    return this.write(dir < 0 ? '\x1b[1K' : dir > 0 ? '\x1b[0K' : '\x1b[2K', cb);
  }
  clearScreenDown(cb?: () => void): boolean {
    return this.write('\x1b[0J', cb);
  }
  getColorDepth(): number {
    return 8;
  }
  hasColors(): boolean {
    return true;
  }
}

/** A fast retry policy so failure tests do not sleep for seconds. */
export const FAST_RETRY = { attempts: 3, baseMs: 1, maxMs: 5 };

// Worker threads are not in process.getActiveResourcesInfo(): count the ones alive, for the check below.
let liveWorkers = 0;
const NodeWorker = threads.Worker;
threads.Worker = class CountedWorker extends NodeWorker {
  constructor(...args: ConstructorParameters<typeof NodeWorker>) {
    super(...args);
    liveWorkers++;
    this.once('exit', () => liveWorkers--);
  }
};
syncBuiltinESMExports();

/** What keeps the event loop alive (timers, sockets, workers, children), counted by kind. */
function activeResources(): Map<string, number> {
  const counts = new Map<string, number>();
  if (liveWorkers > 0) counts.set('Worker', liveWorkers);
  for (const kind of process.getActiveResourcesInfo()) {
    // Immediates and file requests finish on their own; they cannot keep a process from exiting. A FileHandle's
    // close (fs.promises) is a file request too, listed as CloseReq: one in flight, queued behind other file work
    // on libuv's threads of a busy machine, outlasted the turns below (staging.test.ts, in a full run).
    if (kind === 'Immediate' || kind.startsWith('FSReq') || kind === 'CloseReq') continue;
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return counts;
}

/**
 * Fails when a run of main() left something running that was not there before it: a timer, a socket, a worker or
 * a child (a spinner's timer is what kept a terminal run from exiting). Sockets closed by the run may need a few
 * turns of the event loop to be released, so it is given them (turns, not wall time).
 */
async function expectNothingLeftBehind(before: Map<string, number>, args: string[]): Promise<void> {
  let extra: string[] = [];
  for (let turn = 0; turn < 50; turn++) {
    const after = activeResources();
    extra = [...after].filter(([kind, n]) => n > (before.get(kind) ?? 0)).map(([kind, n]) => `${n - (before.get(kind) ?? 0)} ${kind}`);
    if (extra.length === 0) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`gamehost ${args.join(' ')} left behind: ${extra.join(', ')}`);
}

export async function runCli(args: string[], opts: RunOptions = {}): Promise<RunResult> {
  const before = activeResources();
  const stdout = new Capture(opts.tty ?? false, opts.columns ?? 80);
  const stderr = new Capture(opts.tty ?? false, opts.columns ?? 80);
  stdout.onWrite = opts.onStdout;
  const stdin = new PassThrough();
  stdin.end(opts.stdin ?? '');
  const code = await main(['node', 'gamehost', ...args], {
    io: { stdout, stderr, stdin },
    env: opts.env ?? {},
    cwd: opts.cwd ?? process.cwd(),
    retry: opts.retry ?? FAST_RETRY,
    signal: opts.signal ?? new AbortController().signal,
  });
  await expectNothingLeftBehind(before, args);
  return { code, stdout: stdout.text, stderr: stderr.text };
}

const created: string[] = [];

/**
 * A fresh directory under this run's temporary directory (test/helpers/global-setup.ts), removed when the test
 * file ends (test/helpers/setup.ts). Named after the test file, so one left behind says where it came from.
 */
export function tempDir(prefix = 'gamehost-test-'): string {
  const file = expect.getState().testPath;
  const from = file ? `${path.basename(file).replace(/\.test\.ts$/, '')}-` : '';
  const dir = fs.mkdtempSync(path.join(inject('tempRoot'), `${prefix}${from}`));
  created.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of created.splice(0)) fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}

/** An isolated home for the embedded emulator, with short lifecycle delays. */
export function isolatedEnv(extra: Env = {}, config: Record<string, unknown> = { startDelayMs: 0, readyDelayMs: 0 }): Env {
  const home = tempDir();
  const configFile = path.join(home, 'emulator.json');
  fs.writeFileSync(configFile, JSON.stringify(config));
  return {
    HOME: home,
    XDG_DATA_HOME: path.join(home, 'data'),
    XDG_STATE_HOME: path.join(home, 'state'),
    XDG_CONFIG_HOME: path.join(home, 'config'),
    GAMEHOST_EMULATOR_CONFIG: configFile,
    ...extra,
  };
}

/** Every record of a CSV text, through the CLI's own strict reader. */
export function readCsv(text: string): string[][] {
  const parser = new CsvStreamParser();
  return [...parser.push(text), ...parser.end()];
}
