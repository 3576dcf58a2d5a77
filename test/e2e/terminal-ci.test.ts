// What a CI pipeline sees: no animations even on a pseudo-terminal, annotations for failures, and a job summary
// for a pushed build.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/cli.js';
import { useEmulator } from '../helpers/emulator.js';

// Cursor hiding, movement and erasing: what a spinner or a redrawn progress line writes.
// eslint-disable-next-line no-control-regex
const ANIMATION = /\x1b\[\?25[lh]|\x1b\[\d*[ABCDGJK]|\r(?!\n)/;

describe('CI', () => {
  const fx = useEmulator();
  let dir: string;
  beforeAll(async () => {
    dir = tempDir();
    fs.writeFileSync(path.join(dir, 'server.tar'), Buffer.alloc(256 * 1024, 1));
  });

  it('build push appends a markdown summary to $GITHUB_STEP_SUMMARY', async () => {
    const summary = path.join(dir, 'summary.md');
    fs.writeFileSync(summary, '# Earlier step\n\n');
    const r = await runCli(['build', 'push', 'server.tar', '--tag', 'game-server:ci-1', '--json'], {
      env: { ...fx.env, GITHUB_ACTIONS: 'true', CI: 'true', GITHUB_STEP_SUMMARY: summary },
      cwd: dir,
    });
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout);
    const text = fs.readFileSync(summary, 'utf8');
    expect(text.startsWith('# Earlier step\n\n')).toBe(true);
    expect(text.slice('# Earlier step\n\n'.length)).toMatch(
      new RegExp(
        [
          '^### gamehost build push: `game-server:ci-1`',
          '',
          '\\| \\| \\|',
          '\\|---\\|---\\|',
          `\\| Build \\| \`${result.build_id}\` \\|`,
          '\\| Tag \\| `game-server:ci-1` \\|',
          '\\| Size \\| 256 KiB \\(262144 bytes\\) \\|',
          `\\| SHA-256 \\| \`${result.sha256}\` \\|`,
          '\\| Time \\| \\d+(\\.\\d)? m?s \\|',
          '',
          '$',
        ].join('\n'),
      ),
    );
  });

  it('no summary without $GITHUB_STEP_SUMMARY, and one that cannot be written is only a warning', async () => {
    const before = fs.readdirSync(dir).sort();
    const plainRun = await runCli(['build', 'push', 'server.tar', '--tag', 'game-server:ci-2', '--json'], { env: fx.env, cwd: dir });
    expect(plainRun.code).toBe(0);
    expect(fs.readdirSync(dir).sort()).toEqual(before);

    const r = await runCli(['build', 'push', 'server.tar', '--tag', 'game-server:ci-3', '--json'], { env: { ...fx.env, GITHUB_STEP_SUMMARY: dir }, cwd: dir });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).build_id).toBeTruthy();
    expect(r.stderr).toContain(`warning: could not append to $GITHUB_STEP_SUMMARY (${dir}):`);
  });

  it('a failure is also a ::error:: annotation under GitHub Actions', async () => {
    const r = await runCli(['lobby', 'create', '--game-mode', 'nope'], { env: { ...fx.env, GITHUB_ACTIONS: 'true' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^::error::Game mode "nope" not found; this namespace has default, duos and squads\. \(MATCHMAKER_GAME_MODE_NOT_FOUND, ray [\w-]+\)$/m);
  });

  it('progress animates on a terminal, and never in CI even when stderr is a terminal', async () => {
    const local = await runCli(['build', 'push', 'server.tar', '--tag', 'game-server:tty-1'], { env: fx.env, cwd: dir, tty: true });
    expect(local.code).toBe(0);
    expect(local.stderr).toMatch(ANIMATION);
    for (const ci of [{ CI: 'true' }, { GITHUB_ACTIONS: 'true' }, { BUILDKITE: 'true' }, { JENKINS_URL: 'https://ci.example' }]) {
      const r = await runCli(['build', 'push', 'server.tar', '--tag', `game-server:ci-${Object.keys(ci)[0]!.toLowerCase().replace(/_/g, '-')}`], { env: { ...fx.env, ...ci }, cwd: dir, tty: true });
      expect(r.code).toBe(0);
      expect(r.stderr).not.toMatch(ANIMATION);
    }
  });
});
