// Every file a command writes (history export -o, the kept namespace tokens, the profiles) as a shell would name
// it: a regular file is written whole or not at all, and anything that is not a regular file (a character
// device, a FIFO, /dev/stdout) is written straight into and never renamed over. Run as root, where renaming over
// /dev/null succeeds (and replaced it with a regular file).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, runCli, tempDir } from '../helpers/cli.js';
import { BIN } from '../helpers/bin.js';

const root = process.getuid?.() === 0;
if (!root) console.warn('output-files.test.ts: not root, so the character-device cases are skipped (mknod needs root; CI runs as root)');

function gamehost(args: string[], env: NodeJS.ProcessEnv, cwd: string) {
  return spawnSync(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, ...env }, cwd, encoding: 'utf8' });
}

/** A home whose embedded emulator has one lobby, so an export has a row. */
async function homeWithALobby() {
  const env = isolatedEnv();
  const r = await runCli(['lobby', 'create', '--game-mode', 'default', '-q'], { env });
  expect(r.code).toBe(0);
  return env;
}

describe('history export -o: what is not a regular file is written into, never replaced', () => {
  it.runIf(root)('a character device (made for the test, as /dev/null is) stays a device', async () => {
    const env = await homeWithALobby();
    const dir = tempDir();
    const device = path.join(dir, 'null');
    const made = spawnSync('mknod', [device, 'c', '1', '3']);
    expect(made.status, made.stderr?.toString()).toBe(0);
    const r = gamehost(['history', 'export', '--since', '1h', '-o', device], env, dir);
    expect(r.stderr).toContain(`Wrote 1 lobby`);
    expect(r.status).toBe(0);
    expect(fs.statSync(device).isCharacterDevice()).toBe(true);
    expect(fs.readdirSync(dir)).toEqual(['null']);
  });

  it('a FIFO gets the CSV through it and stays a FIFO', async () => {
    const env = await homeWithALobby();
    const dir = tempDir();
    const fifo = path.join(dir, 'rows');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const child = spawn(process.execPath, [BIN, 'history', 'export', '--since', '1h', '-o', fifo], { env: { PATH: process.env.PATH, ...env }, cwd: dir, stdio: 'ignore' });
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
    const read = await fs.promises.readFile(fifo, 'utf8');
    expect(await exited).toBe(0);
    expect(read.split('\n')[0]).toMatch(/^lobby_id,/);
    expect(read.trimEnd().split('\n')).toHaveLength(2);
    expect(fs.statSync(fifo).isFIFO()).toBe(true);
    expect(fs.readdirSync(dir)).toEqual(['rows']);
  });

  it('-o /dev/stdout into a pipe: the CSV comes through the pipe', async () => {
    const env = await homeWithALobby();
    const dir = tempDir();
    const r = spawnSync('sh', ['-c', `"${process.execPath}" "${BIN}" history export --since 1h -o /dev/stdout | cat`], { env: { PATH: process.env.PATH, ...env }, cwd: dir, encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/^lobby_id,/);
    expect(r.stderr).toContain('Wrote 1 lobby (');
    expect(r.stderr).toContain(' to /dev/stdout\n');
  });

  it('a regular file behind a link: the link stays a link, the file gets the rows', async () => {
    const env = await homeWithALobby();
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'real.csv'), 'old');
    fs.symlinkSync('real.csv', path.join(dir, 'link.csv'));
    const r = gamehost(['history', 'export', '--since', '1h', '-o', 'link.csv'], env, dir);
    expect(r.status).toBe(0);
    expect(fs.lstatSync(path.join(dir, 'link.csv')).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'real.csv'), 'utf8')).toMatch(/^lobby_id,/);
  });

  it('-o exports/ makes the directory, as docs/commands.md says any name ending in / does', async () => {
    const env = await homeWithALobby();
    const dir = tempDir();
    const r = await runCli(['history', 'export', '--since', '24h', '-o', 'exports/', '-q'], { env, cwd: dir });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(path.dirname(r.stdout.trim())).toBe(path.join(dir, 'exports'));
    expect(fs.readFileSync(r.stdout.trim(), 'utf8')).toMatch(/^lobby_id,/);
    // A file in a directory that does not exist is still a mistyped path.
    const missing = await runCli(['history', 'export', '--since', '24h', '-o', 'nowhere/week.csv'], { env, cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(`error: -o: directory ${path.join(dir, 'nowhere')} does not exist\n  to have it made, end the name with a slash: -o dir/\n`);
  });
});

describe("the CLI's own files", () => {
  it.runIf(root)('profiles: a config file that is a device is refused in one line, and stays a device', async () => {
    const env = isolatedEnv();
    const dir = path.join(env.XDG_CONFIG_HOME!, 'gamehost');
    fs.mkdirSync(dir, { recursive: true });
    const device = path.join(dir, 'config.json');
    expect(spawnSync('mknod', [device, 'c', '1', '3']).status).toBe(0);
    const r = gamehost(['profile', 'use', 'default'], env, dir);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(`error: ${device} is not a regular file, and profiles (which hold tokens) are kept only in one\n  move it away, then run \`gamehost login\` again\n`);
    expect(fs.statSync(device).isCharacterDevice()).toBe(true);
  });
});
