// Two replicas of the real `emulator serve --run` on one PostgreSQL, reached through a proxy that stalls (the
// database stops answering, connections held): their servers print and exit during the outage. Once it answers
// again, each replica records its server's exit and lines within 10 s, and no find, during the outage or after,
// hands out the dead servers' lobbies. The outage here lasts 8 s (GAMEHOST_TEST_OUTAGE_MS to change it; the issue's
// 20 s behaves the same, see docs/development.md): past the 5 s within which a replica must have said its records
// are current, and several of the store's 1 s bounds.
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { RivetClient } from '@rivet-gg/api';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import { logLines, say, until } from '../helpers/lobby-server.js';
import { createTestDatabase, PG_PRESENT } from '../helpers/postgres.js';
import { serve, stopReplica, type Replica } from '../helpers/replica.js';
import { stallProxy, type StallProxy } from '../helpers/stall-proxy.js';

const GAME_SERVER = path.resolve(import.meta.dirname, '../fixtures/game-server.mjs');
const RUN = `"${process.execPath}" "${GAME_SERVER}"`;
const OUTAGE_MS = Number(process.env.GAMEHOST_TEST_OUTAGE_MS ?? 8_000);
const LINUX = process.platform === 'linux';

/** A lobby's status as the service answers it (getNamespaceLobby; read as JSON: a stopped one's running is null). */
async function lobbyStatus(r: Replica, lobbyId: string): Promise<{ stopped?: { exit_code: number; failed: boolean } } | undefined> {
  const res = await fetch(`${r.info.endpoint}/cloud/games/${r.info.game_id}/namespaces/${r.info.namespace_id}/logs/lobbies/${lobbyId}`, {
    headers: { authorization: `Bearer ${r.info.tokens.cloud}` },
  });
  return res.ok ? ((await res.json()) as { lobby: { status: { stopped?: { exit_code: number; failed: boolean } } } }).lobby.status : undefined;
}

describe.skipIf(!LINUX || !PG_PRESENT)('two replicas through a database outage', () => {
  const replicas: Replica[] = [];
  let proxy: StallProxy | undefined;
  afterAll(async () => {
    proxy?.resume();
    await Promise.all(replicas.map(stopReplica));
    await proxy?.close();
  }, 60_000);

  it('the exits and lines of servers that ended during it are recorded within 10 s of its end; no find hands their lobbies out', { timeout: 60_000 + OUTAGE_MS }, async () => {
    const url = new URL(await createTestDatabase());
    proxy = await stallProxy(url.hostname, Number(url.port));
    url.hostname = proxy.host;
    url.port = String(proxy.port);
    const configFile = path.join(tempDir(), 'emulator.json');
    fs.writeFileSync(configFile, JSON.stringify({ startDelayMs: 0, readyDelayMs: 0, storeTimeoutMs: 1_000 }));
    const start = (replica: string) => serve(['--run', RUN, '--config', configFile, '--data-dir', tempDir(), '--database', url.href, '--replica', replica]);
    replicas.push(...(await Promise.all([start('outage-a'), start('outage-b')])));
    const [a, b] = replicas as [Replica, Replica];
    const find = (r: Replica, gameMode: string) =>
      new RivetClient({ environment: r.info.endpoint, token: r.info.tokens.public }).matchmaker.lobbies.find({ gameModes: [gameMode] });

    // A lobby on each replica (game modes apart, so B's find does not join A's), answered once its server is ready.
    const [foundA, foundB] = await Promise.all([find(a, 'default'), find(b, 'duos')]);
    const dead = new Map([
      [foundA.lobby.lobbyId, { replica: a, port: foundA.lobby.ports.default!.port!, code: 7 }],
      [foundB.lobby.lobbyId, { replica: b, port: foundB.lobby.ports.default!.port!, code: 9 }],
    ]);
    const handedOut: string[] = [];
    const tryFind = async (r: Replica, gameMode: string) => {
      try {
        const found = await find(r, gameMode);
        handedOut.push(found.lobby.lobbyId);
      } catch {
        // Refused (the store does not answer): handed nothing out.
      }
    };

    proxy.stall();
    const outageStart = Date.now();
    // During the outage each server prints a line (its answer to `burn`) and exits with its own code.
    for (const { port, code } of dead.values()) {
      expect(await say(port, 'burn 1')).toMatch(/^burned \d+$/);
      expect(await say(port, `exit ${code}`)).toBe('');
    }
    // Finds during the outage, on both replicas, in both game modes.
    await Promise.all([tryFind(a, 'default'), tryFind(b, 'duos'), tryFind(b, 'default'), tryFind(a, 'duos')]);
    await sleep(Math.max(0, OUTAGE_MS - (Date.now() - outageStart)));

    proxy.resume();
    const recovered = Date.now();
    // Finds from the moment it answers again, while the replicas write what waited.
    const finding = Promise.all([tryFind(a, 'default'), tryFind(b, 'duos'), tryFind(b, 'default'), tryFind(a, 'duos')]);
    for (const [lobbyId, { replica, code }] of dead) {
      const other = replica === a ? b : a;
      const stopped = await until(`lobby ${lobbyId} recorded stopped`, async () => {
        const status = await lobbyStatus(other, lobbyId);
        return status?.stopped ?? undefined;
      }, 20_000);
      expect(stopped).toMatchObject({ exit_code: code, failed: true });
      expect(Date.now() - recovered).toBeLessThan(10_000);
      // The line it printed during the outage is in its logs, on either replica.
      expect(await logLines(other, lobbyId, 'std_out')).toEqual(expect.arrayContaining([expect.stringMatching(/^burned \d+$/)]));
    }
    await finding;
    // And after: finds once all is recorded.
    await Promise.all([tryFind(a, 'default'), tryFind(b, 'duos')]);
    expect(handedOut.length).toBeGreaterThan(0);
    expect(handedOut.filter((id) => dead.has(id))).toEqual([]);
    expect(a.stderr()).toContain('the store does not answer');
    expect(a.stderr()).toContain('the store answers again');
  });
});
