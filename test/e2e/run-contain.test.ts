// Acceptance (issue 31, items 1 and 2) on the real `gamehost emulator serve --run`: a lobby's server gets its lobby's
// environment, a short allow-list of the host's and the names --pass-env adds, and nothing else of serve's (its
// admin token, signing secret and database URL set in serve's environment, the database in use).
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import { logLines, until } from '../helpers/lobby-server.js';
import { createTestDatabase, PG_PRESENT } from '../helpers/postgres.js';
import { replicaEnv, serve, stopReplica, type Replica } from '../helpers/replica.js';
import { runBin } from '../helpers/bin.js';

const POSIX = process.platform !== 'win32';
const replicas: Replica[] = [];
afterAll(() => Promise.all(replicas.map(stopReplica)), 30_000);

/** A lobby made through the real CLI on `r` (its server started by serve); its id. */
async function createLobby(r: Replica): Promise<string> {
  const out = await runBin(['lobby', 'create', '--game-mode', 'default', '--json'], replicaEnv(tempDir(), r));
  expect(out.code, out.stderr).toBe(0);
  return JSON.parse(out.stdout).lobby.lobby_id;
}

describe.skipIf(!POSIX || !PG_PRESENT)("a lobby's server and serve's environment", () => {
  it("gets its lobby's variables, the allow-list and --pass-env's names; none of serve's secrets nor anything else", { timeout: 60_000 }, async () => {
    const secrets = {
      GAMEHOST_EMULATOR_ADMIN_TOKEN: randomBytes(32).toString('hex'),
      GAMEHOST_EMULATOR_SECRET: randomBytes(32).toString('hex'),
      GAMEHOST_EMULATOR_DATABASE_URL: await createTestDatabase(),
    };
    const r = await serve(['--run', 'env; echo END; exec sleep 300', '--pass-env', 'GAME_ASSETS', '--data-dir', tempDir()], {
      ...secrets,
      GAME_ASSETS: '/srv/assets',
      DEVELOPER_CLOUD_KEY: 'not-for-servers',
      LC_ALL: 'C.UTF-8',
      TZ: 'Europe/Paris',
      TMPDIR: '/tmp',
    });
    replicas.push(r);
    expect(r.info.stores.records).toBe('postgres');
    const lobbyId = await createLobby(r);
    const lines = await until('the server\'s environment', async () => {
      const got = await logLines(r, lobbyId, 'std_out');
      return got.includes('END') ? got.slice(0, got.indexOf('END')) : undefined;
    });
    const env = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    expect(env).toMatchObject({ RIVET_LOBBY_ID: lobbyId, RIVET_API_ENDPOINT: r.info.endpoint, GAME_ASSETS: '/srv/assets', LC_ALL: 'C.UTF-8', TZ: 'Europe/Paris', TMPDIR: '/tmp' });
    expect(env.PATH).toBe(process.env.PATH);
    expect(env.PORT_default).toMatch(/^\d+$/);
    // What is not the lobby's is the allow-list's, or what the shell sets itself (PWD; SHLVL and `_` in some shells).
    const others = Object.keys(env).filter((name) => !/^(RIVET|PORT)_/.test(name) && !['PWD', 'SHLVL', '_'].includes(name));
    expect(others.sort()).toEqual(['GAME_ASSETS', 'HOME', 'LC_ALL', 'PATH', 'TMPDIR', 'TZ']);
    // Nowhere in what it printed: serve's secrets, whatever the name.
    const printed = lines.join('\n');
    for (const value of [...Object.values(secrets), 'not-for-servers']) expect(printed).not.toContain(value);
    expect(printed).not.toContain(`:${new URL(secrets.GAMEHOST_EMULATOR_DATABASE_URL).password}@`);
  });

  it('--pass-env refuses serve\'s own names and the lobby\'s in one line, before anything starts', async () => {
    for (const [name, why] of [
      ['GAMEHOST_EMULATOR_SECRET', "GAMEHOST_EMULATOR_SECRET is the emulator's own: a server never gets GAMEHOST_* variables"],
      ['RIVET_TOKEN', "RIVET_TOKEN is the lobby's to set: a server gets its lobby's RIVET_* and PORT_* variables"],
      ['1X', '"1X" is not a variable name (letters, digits and _, not starting with a digit)'],
    ]) {
      const dataDir = tempDir();
      const out = await runBin(['emulator', 'serve', '--port', '0', '--run', 'true', '--pass-env', name!, '--data-dir', dataDir]);
      expect(out.code).toBe(2);
      expect(out.stdout).toBe('');
      expect(out.stderr).toBe(`error: --pass-env: ${why}\n`);
    }
    const manual = await runBin(['emulator', 'serve', '--port', '0', '--pass-env', 'GAME_ASSETS', '--data-dir', tempDir()]);
    expect(manual.code).toBe(2);
    expect(manual.stderr).toBe("error: --pass-env goes with what runs lobbies' servers: --run or --run-build\n");
  });
});
