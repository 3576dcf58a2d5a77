// Exit codes a script reads from the real executable: help asked for by naming a group is not an error and goes
// to stdout; a reset declined at its prompt was not done (exit 1); a port in use is an unavailable resource (5),
// not a usage error.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, runCli } from '../helpers/cli.js';
import { BIN } from '../helpers/bin.js';


describe('exit codes of the real executable', () => {
  it.each([[[]], [['lobby']], [['emulator', 'lobby']], [['-q', 'emulator']]])('gamehost %j alone: its help on stdout, nothing on stderr, exit 0', (args) => {
    const r = spawnSync(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, ...isolatedEnv() }, encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    const named = args.filter((a) => !a.startsWith('-'));
    expect(r.stdout.split('\n')[0]).toBe(`Usage: gamehost ${named.map((a) => a + ' ').join('')}[options] [command]`);
  });

  it('--json with no command is a usage error, not the help in the place of its JSON: exit 2, nothing on stdout', () => {
    const r = spawnSync(process.execPath, [BIN, '--json', 'emulator'], { env: { PATH: process.env.PATH, ...isolatedEnv() }, encoding: 'utf8' });
    expect([r.status, r.stdout, r.stderr]).toEqual([2, '', 'error: --json needs a command\nrun `gamehost emulator --help` for usage\n']);
  });

  it('a mistyped command is still a usage error on stderr, exit 2', () => {
    const r = spawnSync(process.execPath, [BIN, 'lobby', 'nope'], { env: { PATH: process.env.PATH, ...isolatedEnv() }, encoding: 'utf8' });
    expect([r.status, r.stdout, r.stderr]).toEqual([2, '', "error: unknown command 'nope'\nrun `gamehost lobby --help` for usage\n"]);
  });

  // Once 141 and silent, as if its reader had gone away.
  it.skipIf(!existsSync('/dev/full')).each([[['--version']], [['--help']], [['version']], [['region', 'list', '--json']]])(
    'gamehost %j with stdout on a full disk: one line saying so, exit 1',
    (args) => {
      const full = openSync('/dev/full', 'w');
      try {
        const r = spawnSync(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, ...isolatedEnv() }, stdio: ['ignore', full, 'pipe'], encoding: 'utf8' });
        expect(r.stderr.split('\n').filter((l) => l.startsWith('error: '))).toEqual(['error: cannot write to stdout: no space left on device']);
        expect(r.status).toBe(1);
      } finally {
        closeSync(full);
      }
    },
  );

  it('emulator reset answered "n" on a terminal: nothing deleted, exit 1', async () => {
    const env = isolatedEnv();
    expect((await runCli(['stats', '-q'], { env })).code).toBe(0);
    // script(1) gives the executable a pseudo-terminal; -e passes its exit code through.
    const r = spawnSync('script', ['-qec', `"${process.execPath}" "${BIN}" emulator reset`, '/dev/null'], { env: { PATH: process.env.PATH, ...env }, input: 'n\n', encoding: 'utf8' });
    expect(r.stdout).toContain('Nothing was deleted.');
    expect(r.status).toBe(1);
  });

  it('emulator serve on a port in use: one line, exit 5 (the usage was right)', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const child = spawn(process.execPath, [BIN, 'emulator', 'serve', '--port', String(port)], { env: { PATH: process.env.PATH, ...isolatedEnv() }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      expect(stderr).toBe(`error: --port ${port} is in use\n  pick another with --port, or --port 0 for any free one\n`);
      expect(code).toBe(5);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
