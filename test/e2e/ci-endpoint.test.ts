// In CI, nothing is written to an embedded emulator nobody asked for: a push or a lobby that went to a throwaway
// emulator would pass for one that reached the service (exit 0, a build_id in $GITHUB_OUTPUT). `--endpoint embedded`
// or GAMEHOST_ENDPOINT=embedded asks for it by name.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, runCli, tempDir } from '../helpers/cli.js';
import { BIN } from '../helpers/bin.js';

const REFUSED = /^error: no endpoint is set, and under CI \((CI|GITHUB_ACTIONS)=true\) this command does not go to a throwaway embedded emulator: pass --endpoint or set GAMEHOST_ENDPOINT, or set GAMEHOST_ENDPOINT=embedded to use the embedded emulator on purpose$/;

function gamehost(args: string[], env: Record<string, string | undefined>) {
  return spawnSync(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, ...env } as NodeJS.ProcessEnv, encoding: 'utf8' });
}

/** A GitHub Actions step's environment, with its output and summary files (empty). */
function actionsStep() {
  const dir = tempDir();
  const files = { GITHUB_OUTPUT: path.join(dir, 'output'), GITHUB_STEP_SUMMARY: path.join(dir, 'summary') };
  for (const f of Object.values(files)) fs.writeFileSync(f, '');
  const server = path.join(dir, 'server.tar');
  fs.writeFileSync(server, Buffer.alloc(64 * 1024, 7));
  const env: Record<string, string | undefined> = { ...isolatedEnv(), GITHUB_ACTIONS: 'true', CI: 'true', ...files };
  return { env, files, server };
}

describe('in CI, no silent embedded emulator', () => {
  it('build push with no endpoint under GitHub Actions: one line, exit 2, nothing in $GITHUB_OUTPUT or the summary, no emulator data', () => {
    const step = actionsStep();
    const r = gamehost(['build', 'push', step.server, '--tag', 'game-server:v1-2-0'], step.env);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[0]).toMatch(REFUSED);
    // The rest is the same line as a workflow annotation.
    expect(lines.slice(1)).toEqual([lines[0]!.replace(/^error: /, '::error::')]);
    expect(fs.readFileSync(step.files.GITHUB_OUTPUT, 'utf8')).toBe('');
    expect(fs.readFileSync(step.files.GITHUB_STEP_SUMMARY, 'utf8')).toBe('');
    expect(fs.existsSync(path.join(step.env.XDG_DATA_HOME!, 'gamehost'))).toBe(false);
  });

  it('build push from stdin is refused before stdin is read', () => {
    const step = actionsStep();
    const r = spawnSync(process.execPath, [BIN, 'build', 'push', '-', '--tag', 'game-server:v1'], {
      env: { PATH: process.env.PATH, ...step.env } as NodeJS.ProcessEnv,
      input: Buffer.alloc(1024, 1),
      encoding: 'utf8',
    });
    expect(r.status).toBe(2);
    expect(r.stderr.split('\n')[0]).toMatch(REFUSED);
    expect(fs.readFileSync(step.files.GITHUB_OUTPUT, 'utf8')).toBe('');
  });

  it.each([
    [['lobby', 'create', '--game-mode', 'default']],
    [['lobby', 'find', '--game-mode', 'default']],
    [['lobby', 'join', '00000000-0000-4000-8000-000000000000']],
    [['lobby', 'stop', '00000000-0000-4000-8000-000000000000']],
  ])('gamehost %j with CI=true and no endpoint: exit 2, the same line', async (args) => {
    const env = isolatedEnv({ CI: 'true' });
    const r = await runCli(args, { env });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(new RegExp(REFUSED.source.replace(/\$$/, '\n$')));
  });

  it('GAMEHOST_ENDPOINT=embedded or --endpoint embedded asks for the embedded emulator: the push is made and reported', () => {
    const step = actionsStep();
    const r = gamehost(['build', 'push', step.server, '--tag', 'game-server:v1-2-0', '--json'], { ...step.env, GAMEHOST_ENDPOINT: 'embedded' });
    expect(r.status, r.stderr).toBe(0);
    const pushed = JSON.parse(r.stdout) as { build_id: string };
    expect(fs.readFileSync(step.files.GITHUB_OUTPUT, 'utf8')).toContain(`build_id=${pushed.build_id}\n`);
    const flag = gamehost(['lobby', 'create', '--endpoint', 'embedded', '--game-mode', 'default', '-q'], step.env);
    expect(flag.status, flag.stderr).toBe(0);
    expect(flag.stdout).toMatch(/^[0-9a-f-]{36}\n$/);
    // The embedded emulator's own commands, and reading, need no endpoint in CI.
    const builds = gamehost(['emulator', 'builds', '-q'], step.env);
    expect([builds.status, builds.stdout]).toEqual([0, `${pushed.build_id}\n`]);
    expect(gamehost(['lobby', 'list', '-q'], step.env).status).toBe(0);
  });

  it('a cloud token with no endpoint is named as the cause, in CI and out of it', async () => {
    const env = isolatedEnv({ GAMEHOST_TOKEN: 'cloud.not-this-emulators.token' });
    const ci = await runCli(['lobby', 'create', '--game-mode', 'default'], { env: { ...env, CI: 'true' } });
    expect(ci.code).toBe(2);
    expect(ci.stderr).toMatch(/^error: GAMEHOST_TOKEN is given but no endpoint is, and under CI \(CI=true\) this command does not go to a throwaway embedded emulator: /);
    const local = await runCli(['lobby', 'create', '--game-mode', 'default'], { env });
    expect(local.code).toBe(3);
    const lines = local.stderr.trimEnd().split('\n').filter((l) => !l.startsWith('Using the local emulator'));
    expect(lines[0]).toMatch(/^error: no endpoint is set, so the token of GAMEHOST_TOKEN went to the embedded emulator, which does not know it \(API_UNAUTHORIZED, ray [\w-]+\)$/);
    expect(lines.slice(1)).toEqual(['  pass --endpoint (or set GAMEHOST_ENDPOINT) for the service the token is for']);
    expect(local.stderr).not.toContain('malformed');
  });
});
