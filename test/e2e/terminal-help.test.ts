// Help and completion, for every command in the tree: a summary, options with defaults, two or three examples
// with one for CI, a snapshot so any change to the help is seen in review, and completion scripts built from it.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli.js';
import { runCli, tempDir } from '../helpers/cli.js';

const sink = new Writable({ write: (_c, _e, cb) => cb() });
// Every definition loaded, as completion does (a run loads only what its argv needs).
const program = await buildProgram({ stdin: process.stdin, stdout: sink, stderr: sink }, async () => {});

/** Every command path under the program: groups, their commands, and the top-level commands. */
function paths(cmd: Command, prefix: string[] = []): { words: string[]; cmd: Command }[] {
  return cmd.commands.flatMap((c) => [{ words: [...prefix, c.name()], cmd: c }, ...paths(c, [...prefix, c.name()])]);
}
const ALL = paths(program).filter(({ words }) => words[0] !== 'help');
const LEAVES = ALL.filter(({ cmd }) => cmd.commands.length === 0);

describe('help', () => {
  it('the tree has the commands of every issue so far', () => {
    expect(ALL.map((p) => p.words.join(' '))).toEqual(
      expect.arrayContaining(['build push', 'lobby create', 'lobby logs', 'history export', 'stats', 'emulator serve', 'login', 'logout', 'profile list', 'profile use', 'profile show', 'completion']),
    );
  });

  it.each(LEAVES.map(({ words, cmd }) => [words.join(' '), cmd] as const))('%s --help: summary, options with defaults, 2-3 examples with one for CI', async (name, cmd) => {
    const r = await runCli([...name.split(' '), '--help']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const [usage, summary] = r.stdout.split('\n\n');
    expect(usage).toMatch(new RegExp(`^Usage: gamehost ${name} `));
    // The summary is one sentence, wrapped to the width like the rest.
    expect(summary!.replace(/\s+/g, ' ')).toBe(cmd.description());
    expect(summary!.length).toBeGreaterThan(10);
    const flat = r.stdout.replace(/\s+/g, ' ');
    // Options (the command's own, when it has some) and the global ones, each with its default when it has one.
    expect(r.stdout).toContain('\nGlobal Options:\n');
    for (const opt of cmd.options) {
      expect(r.stdout).toContain(opt.flags);
      // One way, as descriptions write theirs: `(default: 8)`, never JSON-quoted.
      // (Spaces aside: help may wrap a value after a hyphen.)
      if (opt.defaultValue !== undefined) expect(r.stdout.replace(/\s+/g, '')).toMatch(new RegExp(`[(;]default:${String(opt.defaultValue).replace(/\W/g, '\\$&')}\\)`));
    }
    expect(flat).toContain('--timeout <seconds> timeout of each API call (default: 30; lobby find and join: 60)');
    expect(flat).not.toMatch(/\(default \S|default: "/);
    const examples = (r.stdout.split('\nExamples:\n')[1] ?? '').split('\n').filter(Boolean);
    expect(examples.length).toBeGreaterThanOrEqual(2);
    expect(examples.length).toBeLessThanOrEqual(3);
    for (const e of examples) expect(e).toMatch(/^ {2}\$ .*gamehost /);
    expect(examples.some((e) => e.includes('# in CI'))).toBe(true);
    expect(r.stdout).toMatchSnapshot();
  });

  it.each(ALL.filter(({ cmd }) => cmd.commands.length > 0).map(({ words }) => words.join(' ')))('%s --help lists its commands', async (name) => {
    const r = await runCli([...name.split(' '), '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^Usage: gamehost ${name} `));
    expect(r.stdout).toMatch(/\nCommands:\n/);
    const listed = [...r.stdout.split('\nCommands:\n')[1]!.matchAll(/^ {2}(\S+)/gm)].map((m) => m[1]);
    const children = ALL.filter(({ words }) => words.length === name.split(' ').length + 1 && words.join(' ').startsWith(`${name} `));
    expect(listed).toEqual(children.map(({ words }) => words.at(-1)));
    expect(r.stdout).toMatchSnapshot();
  });

  it('gamehost --help and help exit-codes', async () => {
    const top = await runCli(['--help']);
    expect(top.stdout.replace(/\s+/g, ' ')).toContain('Each value comes from the first of: flag, environment, selected profile, embedded emulator.');
    for (const line of top.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    expect(top.stdout).toMatchSnapshot();
    const codes = await runCli(['help', 'exit-codes']);
    expect(codes.stdout).toMatchSnapshot();
  });

  it('`help <command>` is the same text as `<command> --help`', async () => {
    expect((await runCli(['help', 'profile', 'show'])).stdout).toBe((await runCli(['profile', 'show', '--help'])).stdout);
  });

  it('wraps to the width of the terminal it is written to, 80 columns when piped', async () => {
    const options = (text: string) =>
      text.split('\n\n').filter((block) => /^(Global )?Options:\n/.test(block)).flatMap((block) => block.split('\n').slice(1));
    const wide = options((await runCli(['login', '--help'], { tty: true, columns: 100 })).stdout);
    expect(Math.max(...wide.map((l) => l.length))).toBeGreaterThan(80);
    for (const line of wide) expect(line.length).toBeLessThanOrEqual(100);
    const piped = options((await runCli(['login', '--help'], { columns: 100 })).stdout);
    for (const line of piped) expect(line.length).toBeLessThanOrEqual(80);
  });
});

describe('completion', () => {
  const script = async (shell: string) => {
    const r = await runCli(['completion', shell]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    return r.stdout;
  };

  /** Runs the bash script's completion function for a command line, as bash does on Tab. */
  async function complete(line: string): Promise<string[]> {
    const file = path.join(tempDir(), 'gamehost.bash');
    fs.writeFileSync(file, await script('bash'));
    const words = line.split(' ');
    const program = `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _gamehost; printf '%s\\n' "\${COMPREPLY[@]}"`;
    return new Promise((resolve, reject) =>
      execFile('bash', ['-c', program, 'bash', file, ...words], (err, stdout) => (err ? reject(err) : resolve(stdout.split('\n').filter(Boolean)))),
    );
  }

  it('bash completes commands, subcommands, options and choices from the tree', async () => {
    expect(await complete('gamehost ')).toEqual(expect.arrayContaining(program.commands.map((c) => c.name())));
    expect(await complete('gamehost lo')).toEqual(['lobby', 'login', 'logout']);
    expect(await complete('gamehost profile ')).toEqual(['list', 'use', 'show']);
    expect(await complete('gamehost --json lobby cr')).toEqual(['create']);
    expect(await complete('gamehost --endpoint http://x lobby create --pub')).toEqual(['--publicity']);
    expect(await complete('gamehost lobby create --publicity ')).toEqual(['public', 'private']);
    expect(await complete('gamehost completion ')).toEqual(['bash', 'zsh', 'fish']);
    expect(await complete('gamehost help ex')).toEqual(['exit-codes']);
    const push = program.commands.find((c) => c.name() === 'build')!.commands.find((c) => c.name() === 'push')!;
    const offered = await complete('gamehost build push --');
    for (const o of [...push.options, ...program.options]) expect(offered).toContain(o.long);
  });

  it('bash offers saved profile names for --profile and profile use', async () => {
    const dir = tempDir();
    const bin = path.join(dir, 'gamehost');
    // A stand-in for the installed command, as the script calls `gamehost profile list`.
    fs.writeFileSync(bin, '#!/bin/sh\nprintf "ci\\thttps://a\\nstaging\\thttps://b\\n"\n', { mode: 0o755 });
    const file = path.join(dir, 'gamehost.bash');
    fs.writeFileSync(file, await script('bash'));
    const run = (words: string[]) =>
      new Promise<string>((resolve, reject) =>
        execFile('bash', ['-c', 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _gamehost; echo "${COMPREPLY[*]}"', 'bash', file, ...words], { env: { PATH: `${dir}:${process.env.PATH}` } }, (err, out) =>
          err ? reject(err) : resolve(out.trim()),
        ),
      );
    expect(await run(['gamehost', 'stats', '--profile', ''])).toBe('ci staging');
    expect(await run(['gamehost', 'profile', 'use', 's'])).toBe('staging');
  });

  it('the bash script parses', async () => {
    const file = path.join(tempDir(), 'gamehost.bash');
    fs.writeFileSync(file, await script('bash'));
    await new Promise<void>((resolve, reject) => execFile('bash', ['-n', file], (err) => (err ? reject(err) : resolve())));
  });

  it('zsh and fish scripts cover every command and option', async () => {
    const zsh = await script('zsh');
    const fish = await script('fish');
    expect(zsh.split('\n')[0]).toBe('#compdef gamehost');
    expect(zsh).toContain('compdef _gamehost gamehost');
    expect(fish).toContain("complete -c gamehost -n '__gamehost_at \\'build push\\'' -l kind -x -a 'docker_image oci_bundle'");
    for (const { words, cmd } of ALL) {
      const name = words.at(-1)!;
      expect(zsh).toContain(`'${name}:${cmd.description().replace(/'/g, "'\\''")}'`);
      expect(fish).toContain(`-a '${name}'`);
      for (const o of cmd.options) {
        expect(zsh).toContain(`'${o.long}:`);
        expect(fish).toMatch(new RegExp(`-n '__gamehost_at \\\\'${words.join(' ')}\\\\'' (-s \\w )?-l ${o.long!.slice(2)}\\b`));
      }
    }
    for (const o of program.options) {
      expect(zsh).toContain(`'${o.long}:`);
      expect(fish).toMatch(new RegExp(`^complete -c gamehost (-s \\w )?-l ${o.long!.slice(2)}\\b`, 'm'));
    }
  });
});
