// The exit code tells the truth when a reader goes away. A closed stderr stops the messages, not the work: the
// command finishes and exits as it would have. A closed stdout before the result is written is 141 (128 +
// SIGPIPE, as a shell reports a tool that SIGPIPE ended), never 0. Each case spawns the real bin.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { isolatedEnv, tempDir } from '../helpers/cli.js';
import { BIN } from '../helpers/bin.js';


interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the bin with `closed` (stdout or stderr) closed by its reader before the command can write anything. */
function run(args: string[], env: NodeJS.ProcessEnv, closed?: 'stdout' | 'stderr'): Promise<Ran> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const text = { stdout: '', stderr: '' };
  for (const name of ['stdout', 'stderr'] as const) {
    if (name === closed) child[name].destroy();
    else child[name].on('data', (c: Buffer) => (text[name] += c.toString()));
  }
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, ...text })));
}

// Several processes per case, each starting the embedded emulator: slow on a loaded machine.
describe('a reader that goes away', { timeout: 60_000 }, () => {
  const env = isolatedEnv();
  const dir = tempDir();
  const file = path.join(dir, 'server.tar');
  beforeAll(() => fs.writeFileSync(file, crypto.randomBytes(6 * 1024 * 1024)));

  async function build(tag: string) {
    const listed = await run(['emulator', 'builds', '--json'], env);
    expect(listed.code).toBe(0);
    return (JSON.parse(listed.stdout).builds as { image_tag: string; complete: boolean }[]).find((b) => b.image_tag === tag);
  }

  it('build push with stderr closed: the upload goes on and completes, exit 0, the result on stdout', async () => {
    const r = await run(['build', 'push', file, '--tag', 'closed:stderr', '--json'], env, 'stderr');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ bytes: 6 * 1024 * 1024 });
    expect(await build('closed:stderr')).toMatchObject({ complete: true });
  });

  it('build push with stdout closed: the upload completes but its result never arrived, exit 141 and not a word', async () => {
    const r = await run(['build', 'push', file, '--tag', 'closed:stdout', '--json'], env, 'stdout');
    expect(r.code).toBe(141);
    expect(r.stderr).not.toContain('error');
    expect(await build('closed:stdout')).toMatchObject({ complete: true });
  });

  it.each([
    ['lobby create', ['lobby', 'create', '--game-mode', 'default', '--json']],
    ['stats', ['stats']],
    ['history export', ['history', 'export', '--since', '1h', '-o', '-']],
    ['emulator builds', ['emulator', 'builds']],
  ])('%s: stdout closed is exit 141; stderr closed is exit 0 with the result on stdout', async (_name, args) => {
    const out = await run(args, env, 'stdout');
    expect(out.code).toBe(141);
    expect(out.stderr).not.toContain('error');
    const err = await run(args, env, 'stderr');
    expect(err.code).toBe(0);
    expect(err.stdout.length).toBeGreaterThan(0);
  });

  it('a failure with stderr closed keeps its exit code (a usage error is 2, not 0)', async () => {
    const r = await run(['lobby', 'create', '--game-mode', 'default', '--max-players', 'lots'], env, 'stderr');
    expect(r.code).toBe(2);
  });
});
