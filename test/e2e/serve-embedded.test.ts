// An embedded command (no endpoint) on a data directory that a running `emulator serve` uses: it talks to that serve
// (its lobby is one the serve runs a server for) or refuses in one line naming its pid and endpoint, never writing a
// lobby beside it that nothing serves. And lobbies nothing serves follow production's rules in the embedded
// emulator too, applied when the next command opens it.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatedEnv, plain, runCli, tempDir } from '../helpers/cli.js';
import { until } from '../helpers/lobby-server.js';
import { BIN, runBin } from '../helpers/bin.js';
import { serve, SLOW, stopReplica, type Replica } from '../helpers/replica.js';

const POSIX = process.platform !== 'win32';
const FIXTURE = fileURLToPath(new URL('../fixtures/game-server.mjs', import.meta.url));
const SERVER = `"${process.execPath}" "${FIXTURE}"`;

/** A person's environment with no endpoint: the embedded emulator, on `dataDir`. */
function embeddedEnv(dataDir: string): Record<string, string> {
  const home = tempDir();
  return {
    HOME: home,
    XDG_DATA_HOME: path.join(home, 'data'),
    XDG_STATE_HOME: path.join(home, 'state'),
    XDG_CONFIG_HOME: path.join(home, 'config'),
    GAMEHOST_EMULATOR_DIR: dataDir,
  };
}

async function lobbyLines(r: Replica, lobbyId: string): Promise<string[]> {
  const res = await fetch(`${r.info.endpoint}/cloud/games/${r.info.game_id}/matchmaker/lobbies/${lobbyId}/logs?stream=std_out`, {
    headers: { authorization: `Bearer ${r.info.tokens.cloud}` },
  });
  return ((await res.json()) as { lines?: string[] }).lines?.map((l) => Buffer.from(l, 'base64').toString()) ?? [];
}

describe.skipIf(!POSIX)('an embedded command on the data directory of a running emulator serve', () => {
  const dataDir = tempDir();
  let r: Replica | undefined;
  beforeAll(async () => {
    r = await serve(['--data-dir', dataDir, '--run', SERVER]);
  }, SLOW.timeout);
  afterAll(() => stopReplica(r));

  it('lobby create with no endpoint talks to the serve: the lobby it answers is one the serve runs a server for', SLOW, async () => {
    const made = await runBin(['lobby', 'create', '--game-mode', 'default', '--json'], embeddedEnv(dataDir));
    expect(made.code, made.stderr).toBe(0);
    const lobbyId = JSON.parse(made.stdout).lobby.lobby_id as string;
    // The serve's server for it started and called ready: its lines are in the lobby's logs.
    await until('its server ready', async () => ((await lobbyLines(r!, lobbyId)).includes('ready') ? true : undefined));
    // And the person is told which emulator answered, once.
    const listed = await runBin(['lobby', 'list', '-q'], embeddedEnv(dataDir));
    expect(listed.code, listed.stderr).toBe(0);
    const made2 = await runBin(['lobby', 'create', '--game-mode', 'duos', '--verbose'], embeddedEnv(dataDir));
    expect(made2.stderr).toContain(`Using the emulator that \`gamehost emulator serve\` (pid ${r!.child.pid}) runs at ${r!.info.endpoint} on ${dataDir}.`);
    expect(made2.stderr).not.toContain('Using the local emulator');
  });

  it('on a pseudo-terminal too, and an emulator command on the same data directory (--data-dir) acts on the serve', SLOW, async () => {
    // A person's terminal, not this run's environment: under CI=true the CLI refuses an embedded write.
    const env = { PATH: process.env.PATH, ...embeddedEnv(dataDir) } as NodeJS.ProcessEnv;
    const tty = await promisify(execFile)('script', ['-qec', `"${process.execPath}" "${BIN}" lobby create --game-mode squads`, '/dev/null'], { env });
    const out = plain(tty.stdout).replace(/\r/g, '');
    expect(out).toMatch(/Created a lobby in Atlanta/);
    const lobbyId = /Lobby +([0-9a-f-]{36})/.exec(out)![1]!;
    await until('its server ready', async () => ((await lobbyLines(r!, lobbyId)).includes('ready') ? true : undefined));
    const stopped = await runBin(['emulator', 'lobby', 'stop', lobbyId, '--data-dir', dataDir, '--json'], embeddedEnv(dataDir));
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(JSON.parse(stopped.stdout).lobby.status.stopped).toMatchObject({ exit_code: 0 });
  });
});

describe.skipIf(!POSIX)('a serve the embedded command cannot use', () => {
  it('is refused in one line naming its pid and endpoint, and nothing is written beside it', SLOW, async () => {
    const dataDir = tempDir();
    // The directory's own secret (an embedded command made it), and a serve on it signing with another.
    expect((await runBin(['region', 'list', '-q'], embeddedEnv(dataDir))).code).toBe(0);
    const r = await serve(['--data-dir', dataDir], { GAMEHOST_EMULATOR_SECRET: 'another-secret-another-secret-another-secret' });
    try {
      const made = await runBin(['lobby', 'create', '--game-mode', 'default'], embeddedEnv(dataDir));
      expect(made.code).toBe(1);
      expect(made.stdout).toBe('');
      expect(made.stderr).toBe(
        `error: the data directory ${dataDir} is in use by \`gamehost emulator serve\` (pid ${r.child.pid} at ${r.info.endpoint}), ` +
          `which does not take this directory's tokens (HTTP 401: another secret): give --endpoint ${r.info.endpoint} with its tokens, or stop it (kill ${r.child.pid})\n`,
      );
      const lobbies = await fetch(`${r.info.endpoint}/cloud/games/${r.info.game_id}/namespaces/${r.info.namespace_id}/logs/lobbies`, {
        headers: { authorization: `Bearer ${r.info.tokens.cloud}` },
      });
      expect(((await lobbies.json()) as { lobbies: unknown[] }).lobbies).toEqual([]);
    } finally {
      await stopReplica(r);
    }
  });

  it('one that does not answer (stopped with SIGSTOP) is refused in one line once the probe times out', SLOW, async () => {
    const dataDir = tempDir();
    const r = await serve(['--data-dir', dataDir]);
    try {
      process.kill(r.child.pid!, 'SIGSTOP');
      const made = await runBin(['lobby', 'list', '-q'], embeddedEnv(dataDir));
      expect([made.code, made.stdout, made.stderr]).toEqual([
        1,
        '',
        `error: the data directory ${dataDir} is in use by \`gamehost emulator serve\` (pid ${r.child.pid} at ${r.info.endpoint}), ` +
          `which does not answer (no answer within 3 s): give --endpoint ${r.info.endpoint} with its tokens, or stop it (kill ${r.child.pid})\n`,
      ]);
    } finally {
      process.kill(r.child.pid!, 'SIGCONT');
      await stopReplica(r);
    }
  });

  it('a serve killed with -9 holds nothing: the next command opens the emulator itself', SLOW, async () => {
    const dataDir = tempDir();
    const r = await serve(['--data-dir', dataDir]);
    r.child.kill('SIGKILL');
    await r.exit;
    expect(fs.readdirSync(path.join(dataDir, 'servers'))).toEqual([`${r.child.pid}.json`]);
    const made = await runBin(['lobby', 'create', '--game-mode', 'default', '--json'], embeddedEnv(dataDir));
    expect(made.code, made.stderr).toBe(0);
    expect(made.stderr).not.toContain('in use by');
  });
});

describe("lobbies nothing serves follow production's rules in the embedded emulator", () => {
  it('a created lobby whose player never connects is stopped (exit 0) once its registration window passed, as the next command opens the emulator', async () => {
    const env = isolatedEnv({}, { startDelayMs: 0, readyDelayMs: 0, registrationWindowMs: 1 });
    const made = await runCli(['lobby', 'create', '--game-mode', 'default', '--json'], { env });
    expect(made.code, made.stderr).toBe(0);
    const lobbyId = JSON.parse(made.stdout).lobby.lobby_id as string;
    // No process of the emulator ran in between: the rule is applied by time when the store is read.
    const logs = await runCli(['lobby', 'logs', lobbyId, '--json'], { env });
    const body = JSON.parse(logs.stdout);
    expect(body.lobby.status.stopped).toMatchObject({ exit_code: 0, failed: false });
    expect(Date.parse(body.lobby.status.stopped.stop_ts)).toBe(Date.parse(body.lobby.ready_ts) + 1);
    const list = await runCli(['lobby', 'list', '-q'], { env });
    expect(list.stdout).not.toContain(lobbyId);
  });
});
