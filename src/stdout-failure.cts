// What a failed write to stdout means, for main() (src/cli.ts) and for bin/gamehost.js's own answers to --version and
// --help alike: CommonJS, so the bin can load it without Node's ES-module loader, as it loads help.cjs.

/**
 * Why a write to stdout failed, in a few words (`no space left on device`); undefined when its reader went away
 * (EPIPE, or the stream already ended), which is exit 141 and says nothing.
 */
export function stdoutFailure(err: Error | null | undefined): string | undefined {
  const code = (err as NodeJS.ErrnoException | null | undefined)?.code;
  if (err == null || code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED' || code === 'ERR_STREAM_WRITE_AFTER_END') return undefined;
  // `ENOSPC: no space left on device, write`: the words alone.
  return err.message.replace(/^[A-Z]+: /, '').replace(/, write$/, '');
}
