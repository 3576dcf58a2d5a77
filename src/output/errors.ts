// How a failure reaches the user: one line with what failed (the service's code and ray id when there is
// one), then the documentation link and what to do. An unexpected exception gets one line and a report file.
import fs from 'node:fs';
import path from 'node:path';
import type { BaseContext } from '../base-context.js';
import { EmulatorFailure } from '../emulator/errors.js';
import { ApiError, CliError, EmulatorFailedError, ExitCode } from '../errors.js';
import { stateDir } from '../config/paths.js';
import { envTokens, scrubTokens } from '../shared/redact.js';
import { version } from '../version.js';
import { styler } from './color.js';
import { sanitizeLine } from './sanitize.js';
import { makeDirsSync } from '../shared/make-dirs.js';

/** Escapes a message for a GitHub Actions workflow command. */
function annotation(message: string): string {
  return `::error::${message.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A')}\n`;
}

export function describeError(err: CliError): string {
  let line = sanitizeLine(err.message);
  if (err instanceof ApiError) {
    const code = sanitizeLine(err.code);
    // A presigned answer already reads `403 AccessDenied: Request has expired`: the code is not repeated.
    const named = line.includes(`${err.status} ${code}:`);
    if (err.rayId) line += named ? ` (ray ${sanitizeLine(err.rayId)})` : ` (${code}, ray ${sanitizeLine(err.rayId)})`;
    else if (!named) line += ` (${code})`;
  }
  return line;
}

export function printError(ctx: BaseContext, err: unknown): number {
  // The emulator's own failures are said as the CLI's errors are, with the exit code src/errors.ts gives their code.
  if (err instanceof EmulatorFailure) err = new EmulatorFailedError(err);
  const c = styler(ctx, ctx.io.stderr);
  // Whatever an error quotes (input, a server's words), a token given to this process is never printed whole.
  const known = [ctx.global.token, ctx.global.namespaceToken, ...envTokens(ctx.env)];
  const out = { write: (text: string) => ctx.io.stderr.write(scrubTokens(text, known)) };
  if (err instanceof CliError) {
    if (err.reported) return err.exitCode;
    const line = describeError(err);
    out.write(`${c.red('error')}: ${line}\n`);
    if (err instanceof ApiError && err.documentation) out.write(`  docs: ${sanitizeLine(err.documentation)}\n`);
    if (err.hint) out.write(`  ${err.hint}\n`);
    if (ctx.env.GITHUB_ACTIONS === 'true') out.write(annotation(line));
    return err.exitCode;
  }
  const message = sanitizeLine((err as Error)?.message ?? String(err));
  const report = writeCrashReport(ctx, err, known);
  out.write(`${c.red('error')}: unexpected failure: ${message}\n`);
  out.write(report ? `  a full report was written to ${report}\n` : '  (the report could not be written)\n');
  if (ctx.env.GITHUB_ACTIONS === 'true') out.write(annotation(`unexpected failure: ${message}`));
  return ExitCode.UNEXPECTED;
}

function writeCrashReport(ctx: BaseContext, err: unknown, known: (string | undefined)[]): string | undefined {
  try {
    const dir = path.join(stateDir(ctx.env), 'crash');
    makeDirsSync(dir);
    const file = path.join(dir, `crash-${new Date(ctx.now()).toISOString().replace(/[:.]/g, '-')}-${process.pid}.log`);
    const body = [
      `gamehost ${version} node ${process.versions.node} ${process.platform}-${process.arch}`,
      `time: ${new Date(ctx.now()).toISOString()}`,
      '',
      (err as Error)?.stack ?? String(err),
      '',
    ].join('\n');
    fs.writeFileSync(file, scrubTokens(body, known), { mode: 0o600 });
    return file;
  } catch {
    return undefined;
  }
}
