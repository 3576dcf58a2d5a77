// Many `gamehost` processes at once on one embedded emulator data directory, as parallel CI jobs would run them:
// the one real multi-process test of the store (50 processes, one fresh data directory, exact counts; the players
// then admitted through two `emulator serve` processes at once).
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, tempDir } from '../helpers/cli.js';
import { serve, stopReplica } from '../helpers/replica.js';
import { admit } from '../helpers/emulator.js';
import { BIN } from '../helpers/bin.js';

const PROCESSES = 50;

function gamehost(args: string[], env: Record<string, string | undefined>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** True when the player token (`player.` and an HS256 JWT) was signed with `secret`. */
function signedWith(token: string, secret: Buffer): boolean {
  const [label, head, claims, sig] = token.split('.');
  return createHmac('sha256', secret).update(`${label}.${head}.${claims}`).digest('base64url') === sig;
}

describe('the embedded emulator under concurrent CLI processes', () => {
  it(`${PROCESSES} processes start at once on a fresh data directory: every create succeeds, one secret, exact counts`, { timeout: 180_000 }, async () => {
    // No endpoint anywhere, and no data directory yet: every process races to create it, its secret and its store.
    const dataDir = path.join(tempDir(), 'emulator');
    const env = { PATH: process.env.PATH, ...isolatedEnv(), GAMEHOST_EMULATOR_DIR: dataDir };
    const creates = Array.from({ length: PROCESSES }, (_, i) => ({
      mode: i % 5 === 0 ? 'default' : 'duos',
      region: i % 2 ? 'lnd-fra' : 'lnd-sgp',
    }));
    const runs = await Promise.all(
      creates.map((c) => gamehost(['lobby', 'create', '--game-mode', c.mode, '--region', c.region, '--json'], env)),
    );
    for (const r of runs) {
      expect(r.stderr).not.toContain('error');
      expect(r.code).toBe(0);
    }
    const answers = runs.map((r) => JSON.parse(r.stdout));
    expect(new Set(answers.map((a) => a.lobby.lobby_id)).size).toBe(PROCESSES);
    // One secret won the race: every process signed its player token with the one on disk.
    const secret = fs.readFileSync(path.join(dataDir, 'secret'));
    expect(secret).toHaveLength(32);
    expect(answers.filter((a) => signedWith(a.player.token, secret))).toHaveLength(PROCESSES);

    // Their servers admit every player at once, through two more processes serving the same data directory: the
    // statistics count connected players, and these counts too are kept by the store under processes that race.
    const servers = await Promise.all([serve(['--data-dir', dataDir], env), serve(['--data-dir', dataDir], env)]);
    try {
      await Promise.all(answers.map((a, i) => admit(servers[i % 2]!.info.endpoint, a)));
    } finally {
      await Promise.all(servers.map(stopReplica));
    }
    const after = await gamehost(['stats', '--json'], env);
    expect(after.code).toBe(0);
    const stats = JSON.parse(after.stdout);
    expect(stats.player_count).toBe(PROCESSES);
    const count = (mode: string, region?: string) => creates.filter((c) => c.mode === mode && (region === undefined || c.region === region)).length;
    for (const mode of ['default', 'duos']) {
      expect(stats.game_modes[mode].player_count).toBe(count(mode));
      for (const region of ['lnd-fra', 'lnd-sgp']) expect(stats.game_modes[mode].regions[region].player_count).toBe(count(mode, region));
    }
    expect(count('default')).toBe(PROCESSES / 5);
  });
});
