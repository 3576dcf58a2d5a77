// bash completion where a lobby id goes: the target's lobby ids, asked of the real executable (as the script asks
// the installed one), after an option whose value is optional too; and a target that never answers costs the Tab
// nothing but the bounded wait.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, runCli, tempDir } from '../helpers/cli.js';
import { BIN } from '../helpers/bin.js';


/** A `gamehost` on PATH that runs this tree's executable, and the bash script it prints. */
async function install(): Promise<{ dir: string; script: string }> {
  const dir = tempDir();
  fs.writeFileSync(path.join(dir, 'gamehost'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`, { mode: 0o755 });
  const r = await runCli(['completion', 'bash']);
  const script = path.join(dir, 'gamehost.bash');
  fs.writeFileSync(script, r.stdout);
  return { dir, script };
}

function complete(line: string, installed: { dir: string; script: string }, env: Record<string, string | undefined>): Promise<string[]> {
  const program = `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _gamehost; printf '%s\\n' "\${COMPREPLY[@]}"`;
  return new Promise((resolve, reject) =>
    execFile('bash', ['-c', program, 'bash', installed.script, ...line.split(' ')], { env: { ...env, PATH: `${installed.dir}:${process.env.PATH}` } }, (err, stdout) =>
      err ? reject(err) : resolve(stdout.split('\n').filter(Boolean)),
    ),
  );
}

describe('completion of lobby ids', () => {
  // A dozen completions in a row, each a process that starts the embedded emulator: 7 s here, 10.6 s in a full run,
  // over the 20 s default at a load of 12 on 2 cores.
  it('lobby logs (after --watch, --follow or -n too), lobby stop and emulator lobby stop offer the lobby ids; --watch is not given a file; --stream offers the streams', { timeout: 60_000 }, async () => {
    const env = isolatedEnv();
    const lobby = (await runCli(['lobby', 'create', '--game-mode', 'default', '-q'], { env })).stdout.trim();
    const installed = await install();
    for (const line of ['gamehost lobby logs ', 'gamehost lobby logs --watch ', 'gamehost lobby logs --follow ', 'gamehost lobby logs -n 5 ', 'gamehost lobby stop ', 'gamehost emulator lobby stop ', `gamehost lobby logs ${lobby.slice(0, 4)}`]) {
      expect(await complete(line, installed, env), line).toEqual([lobby]);
    }
    // lobby logs' own options and the streams --stream takes.
    expect(await complete('gamehost lobby logs --stream ', installed, env)).toEqual(['stdout', 'stderr', 'all']);
    expect(await complete('gamehost lobby logs --fol', installed, env)).toEqual(['--follow']);
    expect(await complete('gamehost lobby logs --ex', installed, env)).toEqual(['--export']);
    // Where no lobby id goes, none is offered.
    expect(await complete('gamehost lobby create --game-mode ', installed, env)).toEqual([]);
  });

  it('a target that never answers: the Tab ends with nothing offered', async () => {
    const silent = http.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const env = { ...isolatedEnv(), GAMEHOST_ENDPOINT: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, GAMEHOST_TOKEN: 'cloud.x.y', GAMEHOST_GAME: '12345678-1234-4234-8234-123456789abc', GAMEHOST_NAMESPACE: '12345678-1234-4234-8234-123456789abd' };
      expect(await complete('gamehost lobby logs ', await install(), env)).toEqual([]);
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('an interactive bash offers no file names where a lobby id goes and no lobby is listed; files where a file goes', async () => {
    const env = isolatedEnv();
    const installed = await install();
    // A directory with files bash would offer if it fell back to file names.
    const work = tempDir();
    for (const f of ['alpha.tar', 'beta.tar']) fs.writeFileSync(path.join(work, f), '');
    // bash as a person runs it: interactive, on a pseudo-terminal (script(1)), readline doing the completion.
    const child = spawn('script', ['-qfc', 'bash --norc --noprofile -i', '/dev/null'], {
      cwd: work,
      env: { ...env, PATH: `${installed.dir}:${process.env.PATH}`, TERM: 'dumb', PS1: 'READY> ', INPUTRC: '/dev/null' },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    let out = '';
    const waiters: { text: string; from: number; resolve: () => void }[] = [];
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      for (const w of waiters.splice(0)) (out.indexOf(w.text, w.from) >= 0 ? w.resolve : () => waiters.push(w))();
    });
    /** Resolves once `text` has been printed after what was printed when asked. */
    const printed = (text: string) => new Promise<void>((resolve) => (out.includes(text) ? resolve() : waiters.push({ text, from: 0, resolve })));
    /** Types `keys`, then a marker, and answers what bash printed before the marker came back (completion runs first). */
    const typed = async (keys: string, marker: string) => {
      const from = out.length;
      child.stdin!.write(keys + marker);
      await new Promise<void>((resolve) => waiters.push({ text: marker, from, resolve }));
      return out.slice(from, out.indexOf(marker, from));
    };
    try {
      await printed('READY> ');
      await typed(`source '${installed.script}'\n`, 'SOURCED');
      // Clear the line (Ctrl-U) before each case.
      const noLobby = await typed('\x15gamehost lobby logs \t\t', 'MARK1');
      expect(noLobby).not.toMatch(/alpha|beta/);
      const join = await typed('\x15gamehost lobby join \t\t', 'MARK2');
      expect(join).not.toMatch(/alpha|beta/);
      // A file operand still completes files.
      const push = await typed('\x15gamehost build push al\t', 'MARK3');
      expect(push).toContain('alpha.tar');
    } finally {
      child.stdin!.end('\x15exit\n');
      await new Promise((resolve) => child.once('close', resolve));
    }
  });
});
