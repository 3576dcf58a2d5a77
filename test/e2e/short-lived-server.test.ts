// A server that dies young still ran: the real executable against a real `emulator serve --run`, whose server prints
// two lines and exits at once, shows both lines in `lobby logs` and in the stream's export; a server that could not
// start shows the emulator's own line about it the same way. Nothing here waits on a timer: `lobby logs --follow`
// ends once the lobby stopped.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import { runBin } from '../helpers/bin.js';
import { replicaEnv, serve, SLOW, stopReplica, type Replica } from '../helpers/replica.js';

const POSIX = process.platform !== 'win32';

describe.skipIf(!POSIX)('a server that exits at once counts as started', () => {
  let replica: Replica;
  let env: Record<string, string>;

  beforeAll(async () => {
    const home = tempDir();
    replica = await serve(['--data-dir', path.join(home, 'emulator'), '--run', 'echo hello; echo oops >&2; exit 3']);
    env = replicaEnv(home, replica);
  }, SLOW.timeout);
  afterAll(() => stopReplica(replica));

  async function stoppedLobby(): Promise<string> {
    const created = await runBin(['lobby', 'create', '--game-mode', 'default', '--json'], env);
    expect(created.code).toBe(0);
    const id = (JSON.parse(created.stdout) as { lobby: { lobby_id: string } }).lobby.lobby_id;
    // The follow ends once the lobby stopped (exit 0 whatever the server's code).
    const followed = await runBin(['lobby', 'logs', id, '--follow', '--interval', '0.1'], env);
    expect(followed.code).toBe(0);
    return id;
  }

  it('its two lines are in lobby logs and in each stream\'s export; it is failed with exit 3 and has a start', SLOW, async () => {
    const id = await stoppedLobby();
    const shown = await runBin(['lobby', 'logs', id, '--json'], env);
    expect(shown.code).toBe(0);
    const doc = JSON.parse(shown.stdout) as { lobby: { start_ts?: unknown; status: unknown }; log_lines: unknown[] };
    expect(JSON.stringify(doc.lobby.status)).toMatch(/"exit_code":3\b/);
    expect(typeof doc.lobby.start_ts).toBe('string');
    expect(doc.log_lines).toHaveLength(2);
    const lines = await runBin(['lobby', 'logs', id, '-q'], env);
    expect(lines.stdout.split('\n').filter(Boolean).sort()).toEqual(['hello', 'oops']);
    const out = await runBin(['lobby', 'logs', id, '--export', '-'], env);
    expect(out).toMatchObject({ code: 0, stdout: 'hello\n' });
    const err = await runBin(['lobby', 'logs', id, '--export', '-', '--stream', 'stderr'], env);
    expect(err).toMatchObject({ code: 0, stdout: 'oops\n' });
  });
});

describe.skipIf(!POSIX)('a server that could not start', () => {
  it("shows the emulator's own line about it in lobby logs and its export", SLOW, async () => {
    const home = tempDir();
    const dataDir = path.join(home, 'emulator');
    fs.mkdirSync(dataDir, { recursive: true });
    // Where each lobby's working directory would go is a file: every server fails to start (ENOTDIR).
    fs.writeFileSync(path.join(dataDir, 'lobbies'), '');
    const replica = await serve(['--data-dir', dataDir, '--run', 'echo never']);
    try {
      const env = replicaEnv(home, replica);
      const created = await runBin(['lobby', 'create', '--game-mode', 'default', '--json'], env);
      expect(created.code).toBe(0);
      const id = (JSON.parse(created.stdout) as { lobby: { lobby_id: string } }).lobby.lobby_id;
      expect((await runBin(['lobby', 'logs', id, '--follow', '--interval', '0.1'], env)).code).toBe(0);
      const lines = await runBin(['lobby', 'logs', id, '-q', '--stream', 'stderr'], env);
      expect(lines.stdout).toMatch(/^\[emulator\] its server did not start: .*\n$/);
      const exported = await runBin(['lobby', 'logs', id, '--export', '-', '--stream', 'stderr'], env);
      expect(exported.code).toBe(0);
      expect(exported.stdout).toBe(lines.stdout);
      expect(replica.stderr()).toContain(`lobby ${id}: its server did not start:`);
    } finally {
      await stopReplica(replica);
    }
  });
});
