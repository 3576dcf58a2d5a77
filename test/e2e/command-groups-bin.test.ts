// One pass through each command group with the real bin/gamehost.js against a real `emulator serve`: login and
// profile, build, lobby, history, stats, emulator. The other files test each group in depth (most in-process); this
// one is what `npm test`'s Node.js 24 run (scripts/test-node24.js) runs of them all, so that each group is seen to
// work on both Node.js versions as installed users run it: served on node:sqlite there, better-sqlite3 here.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCsv, tempDir } from '../helpers/cli.js';
import { serve, SLOW, stopReplica, type Replica } from '../helpers/replica.js';
import { runBin } from '../helpers/bin.js';

describe(`each command group through bin/gamehost.js, on Node.js ${process.versions.node}`, () => {
  let r: Replica;
  let env: Record<string, string>;
  let lobbyId: string;
  beforeAll(async () => {
    r = await serve(['--data-dir', tempDir()]);
    const home = tempDir();
    env = { HOME: home, XDG_CONFIG_HOME: path.join(home, 'config'), XDG_STATE_HOME: path.join(home, 'state'), XDG_DATA_HOME: path.join(home, 'data') };
  }, SLOW.timeout);
  afterAll(() => stopReplica(r));

  it('where Node keeps a compile cache (22.1+), a command leaves its compiled modules there; NODE_DISABLE_COMPILE_CACHE=1 none', SLOW, async () => {
    // Not in Node 20's types: read as what it may be.
    const { enableCompileCache } = (await import('node:module')) as { enableCompileCache?: unknown };
    const cached = (tmp: string) => {
      const dir = path.join(tmp, 'node-compile-cache');
      return fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true }).length : 0;
    };
    const [on, off] = [tempDir(), tempDir()];
    expect((await runBin(['--json', 'stats', '--help'], { ...env, TMPDIR: on })).code).toBe(0);
    expect((await runBin(['--json', 'stats', '--help'], { ...env, TMPDIR: off, NODE_DISABLE_COMPILE_CACHE: '1' })).code).toBe(0);
    expect(cached(on) > 0).toBe(typeof enableCompileCache === 'function');
    expect(cached(off)).toBe(0);
  });

  it('login saves a profile from stdin; profile show prints it, tokens redacted', SLOW, async () => {
    const login = await runBin(
      ['login', '--endpoint', r.info.endpoint, '--game', r.info.game_id, '--namespace', r.info.namespace_id, '--token-stdin', '--namespace-token-stdin', '--no-input'],
      env,
      `${r.info.tokens.cloud}\n${r.info.tokens.public}\n`,
    );
    expect(login.code, login.stderr).toBe(0);
    const show = await runBin(['profile', 'show', '--json'], env);
    expect(show.code, show.stderr).toBe(0);
    expect(JSON.parse(show.stdout)).toMatchObject({ name: 'default', endpoint: r.info.endpoint, game: r.info.game_id, namespace: r.info.namespace_id });
    expect(show.stdout).not.toContain(r.info.tokens.cloud);
  });

  it('build push then build list, through the profile', SLOW, async () => {
    const file = path.join(tempDir(), 'server.tar');
    fs.writeFileSync(file, crypto.randomBytes(4096));
    const push = await runBin(['build', 'push', file, '--tag', 'game:smoke', '-q'], env);
    expect(push.code, push.stderr).toBe(0);
    const list = await runBin(['build', 'list', '-q'], env);
    expect(list.stdout.trim().split('\n')).toContain(push.stdout.trim());
  });

  it('lobby create, list, logs and stop', SLOW, async () => {
    const create = await runBin(['lobby', 'create', '--game-mode', 'default', '-q'], env);
    expect(create.code, create.stderr).toBe(0);
    lobbyId = create.stdout.trim();
    const list = await runBin(['lobby', 'list', '--json'], env);
    expect(JSON.parse(list.stdout).lobbies.map((l: { lobby_id: string }) => l.lobby_id)).toContain(lobbyId);
    const stop = await runBin(['lobby', 'stop', lobbyId, '-q'], env);
    expect([stop.code, stop.stdout]).toEqual([0, `${lobbyId}\n`]);
    const logs = await runBin(['lobby', 'logs', lobbyId, '--json'], env);
    expect(JSON.parse(logs.stdout).lobby.status.stopped).toMatchObject({ failed: false });
  });

  it('history export has the stopped lobby; stats counts players', SLOW, async () => {
    const history = await runBin(['history', 'export', '--since', '1h', '-o', '-'], env);
    expect(history.code, history.stderr).toBe(0);
    const [header, ...rows] = readCsv(history.stdout);
    expect(rows.map((row) => row[header!.indexOf('lobby_id')])).toContain(lobbyId);
    const stats = await runBin(['stats', '--json'], env);
    expect(stats.code, stats.stderr).toBe(0);
    expect(JSON.parse(stats.stdout)).toHaveProperty('player_count');
  });

  it('emulator builds list, of the served emulator', SLOW, async () => {
    const builds = await runBin(['emulator', 'builds', 'list', '--endpoint', r.info.endpoint, '--json'], env);
    expect(builds.code, builds.stderr).toBe(0);
    expect(JSON.parse(builds.stdout).builds).toHaveLength(1);
  });
});
