// The Dockerfile and compose.yaml, tested without a Docker engine (none on the development machines): the image's
// command and its health check run here, from a shell, the way the image runs them; the compose file is checked by
// `docker compose config` where that plugin is present, and read for what the service needs everywhere.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { BIN } from '../helpers/bin.js';
import { isolatedEnv, tempDir } from '../helpers/cli.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
// Instructions with their continuation lines joined.
const instructions = dockerfile
  .replace(/\\\n\s*/g, ' ')
  .split('\n')
  .filter((l) => /^[A-Z]+ /.test(l));
const finalStage = instructions.slice(instructions.findLastIndex((l) => l.startsWith('FROM ')));
const instruction = (name: string) => finalStage.filter((l) => l.startsWith(`${name} `)).map((l) => l.slice(name.length + 1));
const execForm = (text: string): string[] => JSON.parse(text.slice(text.indexOf('[')));

/**
 * The image's command as a shell would run it here: `node` is this node, /app is the repository, /data a temp dir,
 * and the port `port` (0: one the server picks and prints, so no other process can take it first).
 */
function imageCommand(port: number, dataDir: string): string[] {
  const [entrypoint] = instruction('ENTRYPOINT');
  const [cmd] = instruction('CMD');
  return [...execForm(entrypoint!), ...execForm(cmd!)].map((a) => (a === '/data' ? dataDir : a === '6420' ? String(port) : a));
}

describe('Dockerfile', () => {
  it('is node:24-slim (node:sqlite: nothing compiled), production dependencies only, a non-root user, a health check on /_emulator/health', () => {
    expect(finalStage[0]).toBe('FROM node:24-slim');
    expect(dockerfile).not.toMatch(/better-sqlite3\/build|g\+\+|python3/);
    expect(instruction('RUN').some((r) => r.includes('npm ci --omit=dev'))).toBe(true);
    expect(instruction('USER')).toEqual(['node']);
    expect(instruction('ENV').join(' ')).toContain('GAMEHOST_HEALTH_URL=http://127.0.0.1:6420/_emulator/health');
    expect(instruction('HEALTHCHECK')).toHaveLength(1);
    expect(instruction('EXPOSE')).toEqual(['6420']);
  });

  it('its command serves, and its health check passes, when run the same way from a shell', async () => {
    const [program, ...args] = imageCommand(0, tempDir());
    expect(program).toBe('node');
    expect(args.slice(0, 3)).toEqual(['bin/gamehost.js', 'emulator', 'serve']);
    const env = { PATH: process.env.PATH, ...isolatedEnv(), GAMEHOST_EMULATOR_ADMIN_TOKEN: 'docker-test-admin-token-0123456789abcdef' };

    // Without an admin token the image's command (on 0.0.0.0) refuses to start, naming the fix.
    const refused = spawnSync(process.execPath, args, { cwd: ROOT, env: { ...env, GAMEHOST_EMULATOR_ADMIN_TOKEN: undefined }, encoding: 'utf8' });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('GAMEHOST_EMULATOR_ADMIN_TOKEN');

    const server = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => server.once('exit', resolve));
    try {
      expect(instruction('HEALTHCHECK')[0]).toMatch(/ CMD \["node", /);
      const health = execForm(instruction('HEALTHCHECK')[0]!);
      // It listens once it prints its endpoint (Docker's start-period), on the port it picked.
      const first = await new Promise<string>((resolve) => readline.createInterface({ input: server.stdout! }).once('line', resolve));
      const port = Number(/^endpoint\thttp:\/\/127\.0\.0\.1:(\d+)$/.exec(first)?.[1]);
      expect(port, first).toBeGreaterThan(0);
      const healthEnv = { ...env, GAMEHOST_HEALTH_URL: `http://127.0.0.1:${port}/_emulator/health` };
      expect(spawnSync(process.execPath, health.slice(1), { env: healthEnv }).status).toBe(0);
      // The admin routes want the token; the service's own do not.
      expect((await fetch(`http://127.0.0.1:${port}/_emulator/games`)).status).toBe(401);
      expect((await fetch(`http://127.0.0.1:${port}/_emulator/games`, { headers: { authorization: 'Bearer docker-test-admin-token-0123456789abcdef' } })).status).toBe(200);
      // And it fails once nothing answers.
      server.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(spawnSync(process.execPath, health.slice(1), { env: healthEnv }).status).toBe(1);
    } finally {
      server.kill('SIGTERM');
      await exited;
    }
  }, 60_000);
});

const composeText = fs.readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8');
const hasComposePlugin = (() => {
  try {
    execFileSync('docker', ['compose', 'version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe('compose.yaml', () => {
  it('starts the emulator from this Dockerfile on PostgreSQL and MinIO, behind TLS, with an admin token required', () => {
    const compose = parseYaml(composeText);
    expect(Object.keys(compose.services).sort()).toEqual(['bucket', 'emulator', 'minio', 'postgres']);
    const emulator = compose.services.emulator;
    expect(emulator.build).toBe('.');
    expect(emulator.environment.GAMEHOST_EMULATOR_ADMIN_TOKEN).toMatch(/^\$\{GAMEHOST_EMULATOR_ADMIN_TOKEN:\?/);
    expect(emulator.environment.GAMEHOST_EMULATOR_DATABASE_URL).toMatch(/^postgres:\/\/gamehost:.*@postgres:5432\/gamehost$/);
    expect(emulator.environment.GAMEHOST_EMULATOR_BUCKET).toBe('s3://gamehost/emulator');
    expect(emulator.command).toEqual(expect.arrayContaining(['--tls-cert', '/certs/cert.pem', '--tls-key', '/certs/key.pem']));
    expect(emulator.depends_on).toEqual({ postgres: { condition: 'service_healthy' }, bucket: { condition: 'service_completed_successfully' } });
    // The emulator's flags are ones serve knows.
    const help = spawnSync(process.execPath, [BIN, 'emulator', 'serve', '--help'], { encoding: 'utf8' }).stdout;
    for (const flag of emulator.command.filter((a: string) => a.startsWith('--'))) expect(help).toContain(flag);
  });

  it.skipIf(!hasComposePlugin)('passes docker compose config', () => {
    const r = spawnSync('docker', ['compose', '-f', path.join(ROOT, 'compose.yaml'), 'config', '-q'], {
      env: { ...process.env, GAMEHOST_EMULATOR_ADMIN_TOKEN: 'x' },
      encoding: 'utf8',
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});
