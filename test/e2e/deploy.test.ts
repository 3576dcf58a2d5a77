// `gamehost deploy`: a Rivet project's config (shaped as Rivet's own templates: yaml and toml, per-mode overrides,
// cdn/engine/kv sections, a namespace overlay, -o) to a version deployed to a namespace of the emulator, over
// loopback HTTP. Validation errors are paths, exit 2, nothing pushed. The Docker part builds a Dockerfile FROM a
// local image and pushes a local image through the real daemon and the real bin (skipped without a daemon, failed
// under CI).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describePath } from '../../src/commands/deploy.js';
import { runBin } from '../helpers/bin.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { DOCKER, DOCKER_PRESENT, buildImage, engineJson } from '../helpers/docker.js';
import { endpointEnv, listBuilds, useEmulator } from '../helpers/emulator.js';

/** A project folder holding `files`. */
function project(files: Record<string, string>): string {
  const dir = tempDir();
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

describe('gamehost deploy', () => {
  const fx = useEmulator();
  const deploy = (dir: string, args: string[], env: Record<string, string | undefined> = {}) => runCli(['deploy', ...args], { env: { ...fx.env, ...env }, cwd: dir });
  let build = '';

  beforeAll(async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'server.tar'), Buffer.alloc(2048, 3));
    const pushed = await runCli(['build', 'push', path.join(dir, 'server.tar'), '--tag', 'game-server:deploy', '-q', '--progress', 'none'], { env: fx.env });
    expect(pushed.code, pushed.stderr).toBe(0);
    build = pushed.stdout.trim();
  });

  const gameOf = async () => (await fx.emu.call('GET', `/cloud/games/${fx.emu.gameId}`, { token: fx.emu.tokens.cloud })).json.game;

  it("a yaml like Rivet's template, to staging: validated, named, created, deployed; cdn and engine named as not deployed", async () => {
    const dir = project({
      'rivet.yaml': [
        'engine:',
        '  unity: {}',
        'cdn:',
        '  build_output: dist',
        'matchmaker:',
        '  max_players: 12',
        '  tier: basic-1d1',
        '  regions:',
        '    lnd-atl: {}',
        '    lnd-fra: {}',
        '  docker:',
        `    image_id: ${build}`,
        '    ports:',
        '      default:',
        '        port: 8080',
        '        protocol: https',
        '  game_modes:',
        '    default: {}',
        '    duos:',
        '      max_players: 2',
        '      regions:',
        '        lnd-fra:',
        '          tier: basic-1d2',
        '          idle_lobbies: { min: 1, max: 2 }',
        '      actions:',
        '        create: { enable_public: true }',
        'kv: {}',
        '',
      ].join('\n'),
    });
    const outputs = path.join(dir, 'github-output');
    const summary = path.join(dir, 'github-summary');
    const r = await deploy(dir, ['staging', '--json'], { GITHUB_OUTPUT: outputs, GITHUB_STEP_SUMMARY: summary });
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    const game = await gameOf();
    const staging = game.namespaces.find((n: { name_id: string }) => n.name_id === 'staging');
    expect(result).toEqual({ version_id: staging.version_id, display_name: expect.stringMatching(/^\d{4}\.\d{2}\.\d{2}-\d+$/), namespace_id: staging.namespace_id, builds: [{ path: 'matchmaker.docker', game_mode: null, build_id: build, source: 'image_id' }] });
    for (const section of ['cdn', 'engine', 'kv']) expect(r.stderr).toContain(`${section}: not deployed`);
    // The version as the service holds it: the per-mode overrides kept, the top level inherited.
    const version = (await fx.emu.call('GET', `/cloud/games/${fx.emu.gameId}/versions/${result.version_id}`, { token: fx.emu.tokens.cloud })).json.version;
    expect(version.config.matchmaker.game_modes.duos).toMatchObject({ max_players: 2, regions: { 'lnd-fra': { tier: 'basic-1d2', idle_lobbies: { min: 1, max: 2 } } }, actions: { create: { enable_public: true } } });
    expect(version.config.matchmaker.game_modes.default).toMatchObject({ max_players: 12, docker: { image_id: build, ports: { default: { port: 8080, protocol: 'https' } } } });
    expect(version.config.cdn).toBeUndefined();
    expect(fs.readFileSync(outputs, 'utf8')).toBe(`version_id=${result.version_id}\ndisplay_name=${result.display_name}\nnamespace_id=${staging.namespace_id}\n`);
    expect(fs.readFileSync(summary, 'utf8')).toContain(`| Namespace | \`staging\` |`);
    // prod is untouched.
    expect(game.namespaces.find((n: { name_id: string }) => n.name_id === 'prod').version_id).not.toBe(result.version_id);
  });

  it('toml, with rivet.prod.toml over it and -o after both, to prod; then --no-namespace creates a version only', async () => {
    const dir = project({
      'rivet.toml': [
        '[matchmaker]',
        'max_players = 10',
        '[matchmaker.docker]',
        `image_id = "${build}"`,
        '[matchmaker.docker.ports.game]',
        'port = 7777',
        'protocol = "udp"',
        '[matchmaker.game_modes.default]',
        '[matchmaker.game_modes.ranked]',
        'max_players = 4',
        '[matchmaker.game_modes.ranked.docker]',
        `image_id = "${build}"`,
        'env = { MODE = "ranked" }',
        '',
      ].join('\n'),
      'rivet.prod.toml': '[matchmaker.game_modes.ranked]\nmax_players = 6\n',
    });
    const r = await deploy(dir, ['prod', '--name', 'toml-1', '-o', 'matchmaker.max_players=20', '-q']);
    expect(r.code, r.stderr).toBe(0);
    const versionId = r.stdout.trim();
    const game = await gameOf();
    expect(game.namespaces.find((n: { name_id: string }) => n.name_id === 'prod').version_id).toBe(versionId);
    const mm = (await fx.emu.call('GET', `/cloud/games/${fx.emu.gameId}/versions/${versionId}`, { token: fx.emu.tokens.cloud })).json.version.config.matchmaker;
    expect(mm.game_modes.ranked).toMatchObject({ max_players: 6, docker: { env: { MODE: 'ranked' } } });
    expect(mm.game_modes.default.max_players).toBe(20);
    const history = await runCli(['namespace', 'history', 'prod', '-q'], { env: fx.env });
    expect(history.stdout.split('\n')[0]).toBe(versionId);

    const only = await deploy(dir, ['--no-namespace', '--name', 'toml-2', '--json']);
    expect(only.code, only.stderr).toBe(0);
    expect(JSON.parse(only.stdout)).toMatchObject({ display_name: 'toml-2', namespace_id: null });
    expect((await gameOf()).namespaces.find((n: { name_id: string }) => n.name_id === 'prod').version_id).toBe(versionId);
    // The name is taken now: the service's validation says so, as a path.
    const again = await deploy(dir, ['--no-namespace', '--name', 'toml-2']);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('  display-name.not-unique: used already\n');
  });

  it('validation errors: every path with its reason, exit 2, nothing pushed; usage errors one line', async () => {
    const dir = project({
      'rivet.yaml': 'matchmaker:\n  docker:\n    dockerfile: Dockerfile\n  game_modes:\n    default:\n      max_players: 0\n      regions:\n        lnd-nowhere: {}\n',
      Dockerfile: 'FROM scratch\n',
    });
    const before = (await listBuilds(fx.emu.endpoint)).length;
    const r = await deploy(dir, ['staging']);
    expect(r.code).toBe(2);
    const lines = r.stderr.split('\n').filter(Boolean);
    expect(lines.filter((l) => l.startsWith('  '))).toEqual([
      '  config.matchmaker.game-modes.*default*.player-counts.max-players-normal.too-low: too low',
      '  config.matchmaker.game-modes.*default*.player-counts.max-players-direct.too-low: too low',
      '  config.matchmaker.game-modes.*default*.player-counts.max-players-party.too-low: too low',
      '  config.matchmaker.game-modes.*default*.regions.0.invalid: not valid',
    ]);
    expect(lines.at(-1)).toBe('error: the config is invalid (4 errors above); nothing was pushed');
    // Nothing was built nor pushed: the Dockerfile's block was validated with the nil id.
    expect((await listBuilds(fx.emu.endpoint)).length).toBe(before);
    const json = await deploy(dir, ['staging', '--json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout).errors[0]).toEqual({ path: ['config', 'matchmaker', 'game-modes', '*default*', 'player-counts', 'max-players-normal', 'too-low'], reason: 'too low' });

    for (const [args, line] of [
      [[], 'error: name the namespace to deploy to (prod, staging, …), or pass --no-namespace to only create the version'],
      [['prod', '--no-namespace'], 'error: --no-namespace and "prod" cannot go together: give one'],
      [['nowhere'], 'error: the game has no namespace "nowhere"; it has prod, staging'],
      [['prod', '-o', 'matchmaker.max_players=many'], expect.stringMatching(/^error: -o matchmaker\.max_players=many: /)],
    ] as const) {
      const bad = await deploy(dir, [...args]);
      expect([bad.code, bad.stderr.split('\n').filter((l) => l.startsWith('error:'))], JSON.stringify(args)).toEqual([2, [line]]);
    }
    const none = await deploy(tempDir(), ['prod']);
    expect([none.code, none.stderr.split('\n').filter((l) => l.startsWith('error:')).length]).toEqual([2, 1]);
  });

  it('version validate: the same reading and validation as deploy, nothing created; valid is one line, exit 0', async () => {
    const dir = project({ 'rivet.yaml': `matchmaker:\n  docker:\n    image_id: ${build}\n  game_modes:\n    default: {}\n`, 'rivet.staging.yaml': 'matchmaker:\n  max_players: 0\n' });
    const versions = async () => (await gameOf()).versions.length;
    const before = await versions();
    const ok = await runCli(['version', 'validate'], { env: fx.env, cwd: dir });
    expect([ok.code, ok.stdout]).toEqual([0, `The config is valid (${path.join(dir, 'rivet.yaml')}).\n`]);
    // A namespace the game does not have is refused as deploy refuses it, never "valid" (it once was).
    const unknown = await runCli(['version', 'validate', 'qa'], { env: fx.env, cwd: dir });
    expect([unknown.code, unknown.stdout]).toEqual([2, '']);
    expect(unknown.stderr).toMatch(/^error: the game has no namespace "qa"; it has /m);
    const overlay = await runCli(['version', 'validate', 'staging'], { env: fx.env, cwd: dir });
    expect(overlay.code).toBe(2);
    expect(overlay.stderr).toContain('  config.matchmaker.game-modes.*default*.player-counts.max-players-normal.too-low: too low\n');
    expect(overlay.stderr.split('\n').filter((l) => l.startsWith('error:'))).toEqual(['error: the config is invalid (3 errors above); gamehost deploy would refuse it']);
    const json = await runCli(['version', 'validate', '-o', 'matchmaker.max_players=4', '--json'], { env: fx.env, cwd: dir });
    expect([json.code, JSON.parse(json.stdout)]).toEqual([0, { errors: [] }]);
    expect(await versions()).toBe(before);
  });

  it('a path is named with the reason of its last segment', () => {
    expect(describePath(['config', 'matchmaker', 'game-modes', '*a*', 'no-build'])).toBe('config.matchmaker.game-modes.*a*.no-build: no image: give image_id, image or dockerfile');
    expect(describePath(['x', 'something-new'])).toBe('x.something-new: something new');
  });
});

describe.skipIf(!DOCKER_PRESENT)('gamehost deploy with the Docker daemon: a Dockerfile FROM a local image, and a local image', { timeout: 180_000 }, () => {
  const fx = useEmulator();
  const base = `gamehost-test/deploy-base:${process.pid}-${Date.now()}`;
  const local = `gamehost-test/deploy-local:${process.pid}-${Date.now()}`;

  beforeAll(async () => {
    const context = tempDir();
    fs.writeFileSync(path.join(context, 'base.txt'), 'the base\n');
    fs.writeFileSync(path.join(context, 'Dockerfile'), 'FROM scratch\nCOPY base.txt /base.txt\n');
    await buildImage(context, base);
    const other = tempDir();
    fs.writeFileSync(path.join(other, 'local.txt'), 'a local image\n');
    fs.writeFileSync(path.join(other, 'Dockerfile'), 'FROM scratch\nCOPY local.txt /local.txt\n');
    await buildImage(other, local);
  });
  // The build argument that marks the image this run's deploy builds (as a label), so the clean-up finds it.
  const marker = `${process.pid}-${Date.now()}`;
  afterAll(async () => {
    const built = await engineJson<{ Id: string }[]>('/images/json?filters=' + encodeURIComponent(JSON.stringify({ label: [`extra=${marker}`] })));
    for (const image of [...built.map((i) => i.Id), local, base]) await DOCKER!.removeImage(image).catch(() => {});
  });

  it('builds the Dockerfile (with --build-arg), pushes it and the local image, one build per block, through the real bin', async () => {
    const dir = project({
      'rivet.yaml': [
        'matchmaker:',
        '  docker:',
        '    dockerfile: server/Dockerfile',
        '    build_args: { FLAVOUR: plain }',
        '  game_modes:',
        '    default: {}',
        '    local:',
        '      docker:',
        `        image: ${local}`,
        '',
      ].join('\n'),
      // No shell in the base to RUN in: the build arguments become labels.
      'server/Dockerfile': `FROM ${base}\nARG FLAVOUR\nARG EXTRA\nLABEL flavour=$FLAVOUR extra=$EXTRA\nCOPY game.txt /game.txt\n`,
      'server/game.txt': 'the game\n',
    });
    const env = { ...endpointEnv(fx.emu), ...(process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}) };
    const r = await runBin(['deploy', 'staging', '-c', path.join(dir, 'rivet.yaml'), '--build-arg', `EXTRA=${marker}`, '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.builds.map((b: { path: string; source: string }) => [b.path, b.source])).toEqual([
      ['matchmaker.docker', 'dockerfile'],
      ['matchmaker.game_modes.local.docker', 'image'],
    ]);
    const builds = await listBuilds(fx.emu.endpoint);
    for (const b of result.builds) expect(builds.find((x) => x.build_id === b.build_id)).toMatchObject({ complete: true });
    const version = (await fx.emu.call('GET', `/cloud/games/${fx.emu.gameId}/versions/${result.version_id}`, { token: fx.emu.tokens.cloud })).json.version;
    expect(version.config.matchmaker.game_modes.default.docker.image_id).toBe(result.builds[0].build_id);
    expect(version.config.matchmaker.game_modes.local.docker.image_id).toBe(result.builds[1].build_id);
    // The build arguments reached the build: the config's and --build-arg's.
    const images = await engineJson<{ Id: string; Labels: Record<string, string> | null }[]>('/images/json?filters=' + encodeURIComponent(JSON.stringify({ label: ['flavour=plain'] })));
    expect(images.some((i) => i.Labels?.extra === marker)).toBe(true);
    // A RIVET_ build argument is the service's own: refused before anything is built.
    const refused = await runBin(['deploy', 'staging', '-c', path.join(dir, 'rivet.yaml'), '--build-arg', 'RIVET_TOKEN=x'], env);
    expect([refused.code, refused.stderr.split('\n').filter((l) => l.startsWith('error:'))]).toEqual([2, ['error: --build-arg RIVET_TOKEN: RIVET_* build args are the service\'s own']]);
  });
});
