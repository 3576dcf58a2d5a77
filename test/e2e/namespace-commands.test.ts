// The configuration commands against the emulator over loopback HTTP: namespace list, create, set-version, history
// and config; version list and show; token create; --namespace by name id. Tables on a terminal, TSV piped, --json
// the service's answer; bad input one line and exit 2; hostile answers shown, not trusted.
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { frontOf, useEmulator } from '../helpers/emulator.js';

describe('namespace, version and token commands', () => {
  const fx = useEmulator();
  const cli = (args: string[], opts: { tty?: boolean; columns?: number } = {}) => runCli(args, { env: fx.env, ...opts });

  it('namespace list: the two every game starts with, piped as TSV; on a terminal a table whose ids are never cut', async () => {
    const piped = await cli(['namespace', 'list']);
    expect(piped.code, piped.stderr).toBe(0);
    const rows = piped.stdout.trimEnd().split('\n').map((l) => l.split('\t'));
    expect(rows.map((r) => r.slice(0, 3))).toEqual([
      ['prod', 'Production', '0.0.1'],
      ['staging', 'Staging', '0.0.1'],
    ]);
    expect(rows[0]![3]).toBe(fx.emu.namespaceId);
    expect((await cli(['namespace', 'list', '-q'])).stdout).toBe('prod\nstaging\n');
    const json = JSON.parse((await cli(['namespace', 'list', '--json'])).stdout);
    expect(json.game.namespaces).toHaveLength(2);
    const tty = await cli(['namespace', 'list'], { tty: true, columns: 60 });
    expect(tty.stdout).toContain(fx.emu.namespaceId);
    for (const line of tty.stdout.split('\n')) expect(line.length).toBeLessThan(60);
  });

  it('namespace create, set-version, history and config; --namespace takes the name id anywhere', async () => {
    const created = await cli(['namespace', 'create', 'qa', '--display-name', 'QA env', '-q']);
    expect(created.code, created.stderr).toBe(0);
    const id = created.stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    // In words, not the service's `name-id.not-unique`; and an empty display name never leaves the machine.
    const again = await cli(['namespace', 'create', 'qa']);
    expect([again.code, again.stderr]).toEqual([
      1,
      'error: the game already has a namespace "qa"\n  list them with `gamehost namespace list`; deploy to it with `gamehost namespace set-version`\n',
    ]);
    const empty = await cli(['namespace', 'create', 'qa2', '--display-name', ' ']);
    expect([empty.code, empty.stderr]).toEqual([2, 'error: --display-name is empty\n']);
    const bad = await cli(['namespace', 'create', 'QA--1']);
    expect([bad.code, bad.stderr.split('\n').length]).toEqual([2, 2]);
    expect(bad.stderr).toMatch(/^error: "QA--1" is not a namespace name id/);
    const unchanged = await cli(['namespace', 'set-version', 'qa', '0.0.1']);
    expect([unchanged.code, unchanged.stdout]).toEqual([0, 'Unchanged: qa runs 0.0.1 already\n']);
    const json = JSON.parse((await cli(['namespace', 'set-version', 'qa', '0.0.1', '--json'])).stdout);
    expect(json).toMatchObject({ namespace_id: id, name_id: 'qa', display_name: '0.0.1', changed: false });
    const unknown = await cli(['namespace', 'set-version', 'qa', '9.9.9']);
    expect([unknown.code, unknown.stderr]).toEqual([2, 'error: the game has no version "9.9.9"; its newest are 0.0.1\n  list them with `gamehost version list`\n']);
    const nowhere = await cli(['namespace', 'history', 'nowhere']);
    expect([nowhere.code, nowhere.stderr]).toEqual([2, 'error: the game has no namespace "nowhere"; it has prod, qa, staging\n']);
    expect((await cli(['namespace', 'history', 'qa'])).stdout).toBe('');
    const set = await cli(['namespace', 'config', 'qa', '--lobby-count-max', '9']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain('lobby_count_max\t9\n');
    expect(set.stdout).toContain('max_players_per_client\t8\n');
    const read = JSON.parse((await cli(['namespace', 'config', id, '--json'])).stdout);
    expect(read.namespace.config.matchmaker).toMatchObject({ lobby_count_max: 9, max_players_per_client: 8 });
    expect((await cli(['namespace', 'config', 'qa', '--lobby-count-max', '0'])).code).toBe(2);
    // A lobby made with --namespace qa is qa's: prod's list does not have it.
    const lobby = await cli(['lobby', 'create', '--game-mode', 'default', '--namespace', 'qa', '--json']);
    expect(lobby.code, lobby.stderr).toBe(0);
    const lobbyId = JSON.parse(lobby.stdout).lobby.lobby_id as string;
    const envOf = await fx.emu.call('GET', `/_emulator/lobbies/${lobbyId}/env`);
    expect(envOf.json.env.RIVET_NAMESPACE_ID).toBe(id);
  });

  it('version list and show; `version` alone is still gamehost\'s own version', async () => {
    const list = await cli(['version', 'list']);
    expect(list.stdout.split('\t').slice(0, 2)).toEqual(['0.0.1', expect.stringMatching(/^[0-9a-f-]{36}$/)]);
    expect((await cli(['version', 'list', '-q'])).stdout).toMatch(/^[0-9a-f-]{36}\n$/);
    const show = await cli(['version', 'show', '0.0.1']);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain('display_name\t0.0.1\n');
    expect(show.stdout).toContain('"game_modes"');
    const json = JSON.parse((await cli(['version', 'show', '0.0.1', '--json'])).stdout);
    expect(Object.keys(json.version.config.matchmaker.game_modes)).toContain('default');
    expect((await cli(['version'])).stdout).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('token create: public and development tokens of the namespace --namespace names, labelled by its name id', async () => {
    const pub = await cli(['token', 'create', 'public', '--namespace', 'staging']);
    expect(pub.code, pub.stderr).toBe(0);
    expect(pub.stdout).toMatch(/^pub_staging\.[\w-]+\.[\w-]+\n$/);
    const dev = await cli(['token', 'create', 'dev', '--port', 'default=7777/udp']);
    expect(dev.stdout).toMatch(/^dev_prod\./);
    const wrong = await cli(['token', 'create', 'public', '--port', 'a=1']);
    expect([wrong.code, wrong.stderr]).toEqual([2, 'error: --hostname and --port are for a development token\n']);
    const badPort = await cli(['token', 'create', 'dev', '--port', 'game=99999']);
    expect(badPort.code).toBe(2);
    expect((await cli(['token', 'create', 'cloud'])).stderr).toBe('error: token kind must be public or development, not "cloud"\n');
    // The token works: a lobby list in staging.
    const listed = await fx.emu.call('GET', '/matchmaker/lobbies/list', { token: pub.stdout.trim() });
    expect(listed.status).toBe(200);
  });

  it('hostile answers: names with control characters, wrong types and unknown versions are shown cleaned, never trusted', async () => {
    const hostile = {
      game: {
        game_id: fx.emu.gameId,
        namespaces: [
          { namespace_id: '11111111-1111-4111-8111-111111111111', name_id: 'evil\u001b[31m', display_name: { no: 1 }, version_id: 7, create_ts: 'not a time' },
          { namespace_id: 12, name_id: null },
          'junk',
        ],
        versions: [{ version_id: 'v', display_name: 'x\u0007y', create_ts: 1e300 }, null],
      },
    };
    const front = await frontOf(fx.emu.endpoint, (req, res) => {
      if (req.url !== `/cloud/games/${fx.emu.gameId}`) return false;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(hostile));
      return true;
    });
    try {
      const env = { ...fx.env, GAMEHOST_ENDPOINT: front.endpoint };
      for (const args of [['namespace', 'list'], ['version', 'list']]) {
        for (const tty of [false, true]) {
          const r = await runCli(args, { env, tty });
          expect(r.code, r.stderr).toBe(0);
          // The service's BEL and its colour code never reach the terminal (the table's own colours may).
          expect(r.stdout).not.toContain('\u0007');
          expect(r.stdout).not.toContain('\u001b[31m');
        }
      }
      const piped = await runCli(['namespace', 'list'], { env });
      expect(piped.stdout).not.toContain('\u001b');
      // The one row with a namespace id and a name id; what is not text is "-".
      expect(piped.stdout.trimEnd().split('\n').map((l) => l.split('\t'))).toEqual([
        [expect.stringContaining('evil'), '-', '-', '11111111-1111-4111-8111-111111111111', '-', 'not a time'],
      ]);
      const versions = await runCli(['version', 'list'], { env });
      expect(versions.stdout.split('\t')[0]).toBe('xy');
    } finally {
      front.close();
    }
  });
});
