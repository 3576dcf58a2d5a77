// The real executable, for the tests that run it as a user's shell does. It runs dist/, not src/: the e2e and
// postgres projects compile dist/ before they start when src/ is newer (test/helpers/dist-fresh.ts); a file of
// another project that runs it, in a run where dist/ is stale, fails here in one line rather than test old code.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { tempDir } from './cli.js';
import { staleSource } from './dist-fresh.js';

export const BIN = path.resolve(import.meta.dirname, '../../bin/gamehost.js');

const stale = staleSource();
if (stale !== undefined) throw new Error(`dist/ is older than ${stale}, and bin/gamehost.js runs dist/: npm run build`);

/** The real executable to its end, piped: exit code, stdout and stderr; `stdin` its input (else none). */
export function runBin(args: string[], env: Record<string, string> = {}, stdin?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, HOME: tempDir(), ...env }, stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
  child.stdin?.end(stdin);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}
