// The installed executable, as a shell runs it: a separate process, real stdio, real signals.
import { spawn, spawnSync } from 'node:child_process';
import net, { type AddressInfo } from 'node:net';
import readline from 'node:readline';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, runCli } from '../helpers/cli.js';
import { BIN } from '../helpers/bin.js';


describe('bin/gamehost.js', () => {
  it('runs the main job against the embedded emulator with no setup', () => {
    const r = spawnSync(process.execPath, [BIN, 'lobby', 'create', '--game-mode', 'default', '--json'], {
      env: { PATH: process.env.PATH, ...isolatedEnv() },
      encoding: 'utf8',
    });
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).lobby.region.region_id).toBe('lnd-atl');
  });

  it('a refused connection on loopback fails at once (no retries), exit 6, with the way to start an emulator', async () => {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    await new Promise((r) => server.close(r));
    const env = { PATH: process.env.PATH, ...isolatedEnv(), GAMEHOST_ENDPOINT: `http://127.0.0.1:${port}`, GAMEHOST_NAMESPACE_TOKEN: 'pub.x.y' };
    const r = spawnSync(process.execPath, [BIN, 'stats'], { env, encoding: 'utf8' });
    expect(r.status).toBe(6);
    expect(r.stderr).toBe(`error: could not reach 127.0.0.1:${port}: connection refused (ECONNREFUSED)\n  nothing listens there: start the emulator with \`gamehost emulator serve\`\n`);
    // --verbose logs every request and every retry: one request, no retry (six attempts took 6-10 s).
    const verbose = spawnSync(process.execPath, [BIN, 'stats', '--verbose'], { env, encoding: 'utf8' });
    expect(verbose.status).toBe(6);
    expect(verbose.stderr.split('\n').filter((l) => l.startsWith('> GET'))).toHaveLength(1);
    expect(verbose.stderr).not.toContain('retrying');
  });

  it('a reader that closes early is not an error', () => {
    const r = spawnSync('sh', ['-c', `"${process.execPath}" "${BIN}" --help | head -1`], { encoding: 'utf8' });
    expect(r.stdout).toBe('Usage: gamehost [options] [command]\n');
    expect(r.stderr).toBe('');
  });

  it('emulator serve --json prints one line, serves other processes, and stops on SIGTERM', async () => {
    const env = isolatedEnv();
    const child = spawn(process.execPath, [BIN, 'emulator', 'serve', '--port', '0', '--json'], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const first = await new Promise<string>((resolve) => readline.createInterface({ input: child.stdout! }).once('line', resolve));
    const info = JSON.parse(first);
    expect(Object.keys(info).sort()).toEqual(['endpoint', 'game_id', 'namespace_id', 'stores', 'tokens']);
    expect(Object.keys(info.tokens).sort()).toEqual(['cloud', 'dev', 'public']);

    const stats = await runCli(['stats', '--json', '--endpoint', info.endpoint, '--namespace-token', info.tokens.public], { env });
    expect(stats.code).toBe(0);
    expect(JSON.parse(stats.stdout).player_count).toBe(0);

    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
