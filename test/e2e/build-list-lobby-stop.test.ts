// `build list` and `lobby stop` against the service's own routes (listGameBuilds, deleteMatchmakerLobby), with the
// terminal contract of the other commands: a table on a terminal, tab-separated piped, --json, -q. And the
// embedded emulator's notice, once per shell session.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, plain, runCli, tempDir } from '../helpers/cli.js';
import { BIN } from '../helpers/bin.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('build list', () => {
  it('the game\'s builds, newest first: table on a terminal, tab-separated piped, --json as served, -q ids', async () => {
    const env = isolatedEnv();
    const dir = tempDir();
    const ids: string[] = [];
    for (const tag of ['game:v1', 'game:v2']) {
      const file = path.join(dir, `${tag.replace(':', '-')}.tar`);
      fs.writeFileSync(file, crypto.randomBytes(2048));
      const r = await runCli(['build', 'push', file, '--tag', tag, '-q'], { env });
      expect(r.code).toBe(0);
      ids.unshift(r.stdout.trim());
    }
    const piped = await runCli(['build', 'list'], { env });
    expect(piped.code).toBe(0);
    const rows = piped.stdout.trimEnd().split('\n').map((l) => l.split('\t'));
    expect(rows.map((r) => r.slice(0, 5))).toEqual([
      [ids[0], 'game:v2', 'game:v2', '2048', 'complete'],
      [ids[1], 'game:v1', 'game:v1', '2048', 'complete'],
    ]);
    expect(rows[0]![5]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);

    const tty = await runCli(['build', 'list', '--wide'], { env, tty: true, columns: 120 });
    const lines = plain(tty.stdout).trimEnd().split('\n');
    expect(lines[0]).toMatch(/^BUILD\s+TAG\s+NAME\s+SIZE\s+STATE\s+CREATED$/);
    expect(lines[1]).toMatch(new RegExp(`^${ids[0]}\\s+game:v2\\s+game:v2\\s+2\\.00 KiB\\s+complete\\s+\\S`));

    const json = await runCli(['build', 'list', '--json'], { env });
    const body = JSON.parse(json.stdout);
    expect(body.builds.map((b: { build_id: string }) => b.build_id).sort()).toEqual([...ids].sort());
    expect(body.builds[0]).toMatchObject({ upload_id: expect.stringMatching(UUID), content_length: 2048, complete: true, tags: { image_tag: expect.any(String) } });
    expect(json.stderr).toBe('');

    const quiet = await runCli(['build', 'list', '-q'], { env });
    expect([quiet.stdout, quiet.stderr]).toEqual([ids.join('\n') + '\n', '']);
  });
});

describe('lobby stop', () => {
  it('stops a lobby on the service; a second stop changes nothing and says so; an unknown lobby exits 4', async () => {
    const env = isolatedEnv();
    const lobby = (await runCli(['lobby', 'create', '--game-mode', 'default', '-q'], { env })).stdout.trim();
    const first = await runCli(['lobby', 'stop', lobby], { env });
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(`lobby_id\t${lobby}\nstopped\tnow\n`);
    const logs = await runCli(['lobby', 'logs', lobby, '--json'], { env });
    expect(JSON.parse(logs.stdout).lobby.status.stopped).toMatchObject({ exit_code: 0, failed: false });

    const tty = await runCli(['lobby', 'stop', lobby], { env, tty: true });
    expect(plain(tty.stdout)).toMatch(/^Lobby\s+\S+\nStopped\s+already \(nothing changed\)\n$/);
    const json = await runCli(['lobby', 'stop', lobby, '--json'], { env });
    expect(JSON.parse(json.stdout)).toEqual({ did_remove: false });
    const quiet = await runCli(['lobby', 'stop', lobby, '-q'], { env });
    expect([quiet.code, quiet.stdout, quiet.stderr]).toEqual([0, `${lobby}\n`, '']);

    const unknown = await runCli(['lobby', 'stop', '12345678-1234-4234-8234-123456789abc'], { env });
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toMatch(/^error: Lobby 12345678-1234-4234-8234-123456789abc not found\./);
  });
});

describe('"Using the local emulator…" once per shell session', () => {
  const NOTICE = 'Using the local emulator; pass --endpoint (or set GAMEHOST_ENDPOINT) for a real service.';
  const shell = (script: string, env: Record<string, string | undefined>) =>
    spawnSync('sh', ['-c', script], { env: { PATH: process.env.PATH, ...env, G: `"${process.execPath}" "${BIN}"` }, encoding: 'utf8' });

  // Eight processes in a row, each starting the embedded emulator (about 0.5 s alone): 5 s here, 8.7 s in a full
  // run, over the 20 s default at a load of 12 on 2 cores.
  it('said by the first command of a shell, not by the next ones; said again in another shell; never under -q or --json', { timeout: 60_000 }, () => {
    const env = isolatedEnv();
    const one = shell('eval "$G stats" >/dev/null; eval "$G stats" >/dev/null; eval "$G lobby create --game-mode default" >/dev/null', env);
    expect(one.stderr.split(NOTICE).length - 1).toBe(1);
    const other = shell('eval "$G stats" >/dev/null', env);
    expect(other.stderr).toBe(NOTICE + '\n');
    const fresh = isolatedEnv();
    const scripted = shell('eval "$G stats --json" >/dev/null; eval "$G stats -q" >/dev/null', fresh);
    expect(scripted.stderr).toBe('');
    // Nothing was remembered by them: the first command for a person still says it.
    expect(shell('eval "$G stats" >/dev/null', fresh).stderr).toBe(NOTICE + '\n');
  });
});
