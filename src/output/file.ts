// Writing a file the user named (`-o`) or one the CLI keeps: a regular file (or a new name) is written beside
// itself and renamed into place at the end, so an interrupted write never leaves half a file; anything else (a
// device such as /dev/null, a FIFO, /dev/stdout or /dev/fd/N, a socket) is written straight into, and never
// renamed over: renaming would replace the device with a regular file (as root) or fail (as anyone else).
import fs from 'node:fs';
import type { OutStream } from '../shared/io.js';
import { OutputClosedError, UsageError, describeFsError } from '../errors.js';

/** Where the bytes go, written in order; commit() puts them in place, abort() removes what was written. */
export interface FileSink {
  write(data: string | Uint8Array): Promise<void>;
  commit(): Promise<void>;
  abort(): Promise<void>;
}

/** What `target` is now: a regular file (through links), something else that exists, or nothing yet. */
function kindOf(target: string): 'regular' | 'other' | 'none' {
  const stat = fs.statSync(target, { throwIfNoEntry: false });
  return !stat ? 'none' : stat.isFile() ? 'regular' : 'other';
}

/**
 * The file a rename should land on: a link's target, so that a link (a profile kept in a dotfiles repository)
 * stays a link.
 */
function renameTarget(target: string): string {
  try {
    return fs.realpathSync(target);
  } catch {
    return target;
  }
}

/** Opens `target` for writing; a failure to open is thrown as Node's error (the caller words it). */
export async function openFileSink(target: string, mode = 0o666): Promise<FileSink> {
  if (kindOf(target) === 'other') {
    const file = await fs.promises.open(target, 'w');
    return {
      write: (data) => file.writeFile(data),
      commit: () => file.close(),
      abort: () => file.close().catch(() => {}),
    };
  }
  const final = renameTarget(target);
  const temp = `${final}.${process.pid}.part`;
  const file = await fs.promises.open(temp, 'w', mode);
  return {
    write: (data) => file.writeFile(data),
    async commit() {
      await file.close();
      await fs.promises.rename(temp, final);
    },
    async abort() {
      await file.close().catch(() => {});
      await fs.promises.rm(temp, { force: true });
    },
  };
}

/** Writes `data` whole to `target` at once, by the same rules (the CLI's own small files: kept tokens). */
export function writeFileWhole(target: string, data: string, mode = 0o600): void {
  if (kindOf(target) === 'other') {
    fs.writeFileSync(target, data);
    return;
  }
  const final = renameTarget(target);
  const temp = `${final}.${process.pid}.tmp`;
  fs.writeFileSync(temp, data, { mode });
  // writeFileSync's mode is masked by the umask; these files hold tokens.
  if (process.platform !== 'win32') fs.chmodSync(temp, mode);
  fs.renameSync(temp, final);
}

/** stdout as a sink: writes wait for the reader (backpressure); a reader that went away ends the command (exit 141). */
export function stdoutSink(out: OutStream): FileSink {
  return {
    async write(data) {
      const ok = out.write(data);
      // A reader that went away: stop here (main() makes it exit 141), rather than wait for a drain that never comes.
      if (out.destroyed || out.errored) throw new OutputClosedError();
      if (ok) return;
      await new Promise<void>((resolve) => {
        const go = () => {
          out.off('drain', go).off('close', go);
          resolve();
        };
        out.on('drain', go).on('close', go);
      });
    },
    async commit() {},
    async abort() {},
  };
}

/**
 * A file the user named with `flag` (`-o`, `--export`), opened by openFileSink's rules; small writes (a line each)
 * are gathered, so a large output is not a syscall per line. Failing to open it is a one-line UsageError.
 */
export async function bufferedFileSink(target: string, flag: string): Promise<FileSink> {
  const file = await openFileSink(target).catch((err) => {
    throw new UsageError(`${flag}: cannot write ${target}: ${describeFsError(err)}`);
  });
  let pending: Buffer[] = [];
  let size = 0;
  const flush = async () => {
    if (size === 0) return;
    const data = Buffer.concat(pending);
    pending = [];
    size = 0;
    await file.write(data);
  };
  return {
    async write(data) {
      const buf = typeof data === 'string' ? Buffer.from(data) : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
      pending.push(buf);
      size += buf.length;
      if (size >= 64 * 1024) await flush();
    },
    async commit() {
      await flush();
      await file.commit();
    },
    abort: () => file.abort(),
  };
}
