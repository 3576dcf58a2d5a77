// Many `gamehost` processes at once on one embedded emulator data directory, as parallel CI jobs would run them.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, tempDir } from '../helpers/cli.js';

const BIN = path.resolve(import.meta.dirname, '../../bin/gamehost.js');
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

describe('the embedded emulator under concurrent CLI processes', () => {
  it(`${PROCESSES} lobby creates at once all succeed, and the statistics count exactly ${PROCESSES} more players`, { timeout: 180_000 }, async () => {
    // No endpoint anywhere: every process starts its own embedded emulator over the one data directory.
    const env = { PATH: process.env.PATH, ...isolatedEnv(), GAMEHOST_EMULATOR_DIR: path.join(tempDir(), 'emulator') };
    const first = await gamehost(['lobby', 'create', '--game-mode', 'default', '--json'], env);
    expect(first.code).toBe(0);
    const before = await gamehost(['stats', '--json'], env);
    expect(before.code).toBe(0);
    const countBefore = JSON.parse(before.stdout);
    expect(countBefore.player_count).toBe(1);

    const runs = await Promise.all(
      Array.from({ length: PROCESSES }, (_, i) => gamehost(['lobby', 'create', '--game-mode', 'duos', '--region', i % 2 ? 'lnd-fra' : 'lnd-sgp', '--json'], env)),
    );
    for (const r of runs) {
      expect(r.stderr).not.toContain('error');
      expect(r.code).toBe(0);
    }
    const lobbyIds = runs.map((r) => JSON.parse(r.stdout).lobby.lobby_id);
    expect(new Set(lobbyIds).size).toBe(PROCESSES);

    const after = await gamehost(['stats', '--json'], env);
    expect(after.code).toBe(0);
    const stats = JSON.parse(after.stdout);
    expect(stats.player_count - countBefore.player_count).toBe(PROCESSES);
    expect(stats.game_modes.duos.player_count).toBe(PROCESSES);
    expect(stats.game_modes.duos.regions['lnd-fra'].player_count).toBe(PROCESSES / 2);
    expect(stats.game_modes.duos.regions['lnd-sgp'].player_count).toBe(PROCESSES / 2);
    expect(stats.game_modes.default.player_count).toBe(1);
  });
});
