// Rivet project configs as `gamehost deploy` reads them: real files in a temporary folder, shaped like the Rivet
// CLI's own (rivet-gg/cli v1.3.4 cli/tests/static/basic/rivet.yaml and rivet.my-ns.yaml, cli/tpl/unreal_config).
import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { dockerSources, loadProjectConfig, type LoadProjectConfigOptions } from '../../src/config/rivet-project.js';
import { tempDir } from '../helpers/cli.js';

let dir: string;
beforeEach(() => {
  dir = tempDir('rivet-project-');
});

const write = (name: string, text: string) => fs.writeFileSync(path.join(dir, name), text);
const load = (options: Partial<LoadProjectConfigOptions> = {}) => loadProjectConfig({ dir, overrides: [], ...options });
/** The one line the CLI would print (and that it is a usage error, exit 2). */
async function failure(options: Partial<LoadProjectConfigOptions> = {}): Promise<string> {
  const err = await load(options).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UsageError);
  expect((err as UsageError).exitCode).toBe(2);
  return (err as UsageError).message;
}

const RIVET_YAML = `# yaml-language-server: $schema=https://rivet.gg/rivet.schema.json
cdn:
  build_command: echo 'Hello, world!' > dist/index.html
  build_output: dist

matchmaker:
  max_players: 16
  tier: basic-1d1

  docker:
    dockerfile: Dockerfile.test
    build_args:
      GAME_MODE: release
    env:
      LOG_LEVEL: info
    ports:
      default:
        port: 7777
        protocol: udp
      http:
        port: 8080
        protocol: https

  regions:
    lnd-atl: {}
    lnd-lax: {}

  game_modes:
    default: {}
    ranked:
      max_players: 2
      tier: basic-2d1
      docker:
        image: my-game:ranked
    custom:
      docker:
        env:
          MODE: custom

kv: {}

engine:
  custom: {}
`;

// The same project written in TOML, the format Rivet keeps "for backwards compatibility".
const RIVET_TOML = `[cdn]
build_command = "echo 'Hello, world!' > dist/index.html"
build_output = "dist"

[matchmaker]
max_players = 16
tier = "basic-1d1"

[matchmaker.docker]
dockerfile = "Dockerfile.test"
build_args = { GAME_MODE = "release" }
env = { LOG_LEVEL = "info" }
ports.default = { port = 7777, protocol = "udp" }
ports.http = { port = 8080, protocol = "https" }

[matchmaker.regions]
lnd-atl = {}
lnd-lax = {}

[matchmaker.game_modes.default]

[matchmaker.game_modes.ranked]
max_players = 2
tier = "basic-2d1"
docker = { image = "my-game:ranked" }

[matchmaker.game_modes.custom.docker.env]
MODE = "custom"

[kv]

[engine.custom]
`;

const EXPECTED = {
  cdn: { build_command: "echo 'Hello, world!' > dist/index.html", build_output: 'dist' },
  matchmaker: {
    max_players: 16,
    tier: 'basic-1d1',
    docker: {
      dockerfile: 'Dockerfile.test',
      build_args: { GAME_MODE: 'release' },
      env: { LOG_LEVEL: 'info' },
      ports: { default: { port: 7777, protocol: 'udp' }, http: { port: 8080, protocol: 'https' } },
    },
    regions: { 'lnd-atl': {}, 'lnd-lax': {} },
    game_modes: {
      default: {},
      ranked: { max_players: 2, tier: 'basic-2d1', docker: { image: 'my-game:ranked' } },
      custom: { docker: { env: { MODE: 'custom' } } },
    },
  },
  kv: {},
  engine: { custom: {} },
};

describe('loadProjectConfig: one config file in the folder', () => {
  it.each([
    ['rivet.yaml', RIVET_YAML],
    ['rivet.yml', RIVET_YAML],
    ['rivet.toml', RIVET_TOML],
    ['rivet.json', JSON.stringify(EXPECTED, null, 2)],
  ])('reads %s as plain JSON, keys in their case', async (name, text) => {
    write(name, text);
    const { config, files } = await load();
    expect(files).toEqual([path.join(dir, name)]);
    expect(config).toEqual(EXPECTED);
    // Plain objects all the way down (smol-toml's tables have no prototype), so the result serialises as it looks.
    expect(Object.getPrototypeOf(config.matchmaker)).toBe(Object.prototype);
    expect(JSON.parse(JSON.stringify(config))).toEqual(EXPECTED);
  });

  it('refuses two config files in one folder, naming both', async () => {
    write('rivet.yaml', RIVET_YAML);
    write('rivet.toml', RIVET_TOML);
    expect(await failure()).toBe(`more than one Rivet config in ${dir}: rivet.yaml, rivet.toml`);
  });

  it('refuses rivet.yaml beside rivet.yml (Rivet does too)', async () => {
    write('rivet.yaml', RIVET_YAML);
    write('rivet.yml', RIVET_YAML);
    expect(await failure()).toMatch(/more than one Rivet config in .*: rivet\.yaml, rivet\.yml$/);
  });

  it('says which names it looked for when there is none, and suggests -c', async () => {
    write('game.yaml', RIVET_YAML);
    const err = await load().catch((e: UsageError) => e);
    expect((err as UsageError).message).toBe(`no Rivet config in ${dir}: looked for rivet.yaml, rivet.yml, rivet.toml, rivet.json`);
    expect((err as UsageError).hint).toMatch(/-c <file>/);
  });

  it('reads an empty YAML file as an empty config, and a top level that is not a mapping as an error', async () => {
    write('rivet.yaml', '# nothing yet\n');
    expect((await load()).config).toEqual({});
    write('rivet.yaml', '- matchmaker\n');
    expect(await failure()).toBe(`${path.join(dir, 'rivet.yaml')}: the top level must be a mapping of keys to values, not a list`);
  });

  it('expands YAML anchors, and keeps legacy rivet.version.toml under rivet.yaml as Rivet does', async () => {
    write('rivet.yaml', 'ports: &p\n  default: { port: 7777, protocol: udp }\nmatchmaker:\n  docker:\n    image: g:1\n    ports: *p\n');
    write('rivet.version.toml', '[matchmaker]\nmax_players = 8\n');
    const { config, files } = await load();
    expect(files.map((f) => path.basename(f))).toEqual(['rivet.yaml', 'rivet.version.toml']);
    expect(config.matchmaker).toEqual({ docker: { image: 'g:1', ports: { default: { port: 7777, protocol: 'udp' } } }, max_players: 8 });
  });
});

describe('loadProjectConfig: namespace overlay', () => {
  it('merges rivet.<ns>.* over rivet.*: mappings key by key, lists and scalars replaced', async () => {
    write('rivet.yaml', RIVET_YAML);
    write(
      'rivet.prod.toml',
      `[matchmaker]
max_players = 32
[matchmaker.docker]
dockerfile = "server.shipping.Dockerfile"
[matchmaker.docker.ports.http]
port = 8443
[matchmaker.idle_lobbies]
min = 3
max = 4
[matchmaker.game_modes.ranked.docker]
image = "my-game:ranked-prod"
`,
    );
    write('rivet.staging.yaml', 'matchmaker:\n  max_players: 4\n');
    const { config, files } = await load({ namespace: 'prod' });
    expect(files).toEqual([path.join(dir, 'rivet.yaml'), path.join(dir, 'rivet.prod.toml')]);
    const mm = config.matchmaker as Record<string, unknown>;
    expect(mm.max_players).toBe(32);
    expect(mm.tier).toBe('basic-1d1');
    expect(mm.idle_lobbies).toEqual({ min: 3, max: 4 });
    expect(mm.docker).toEqual({
      dockerfile: 'server.shipping.Dockerfile',
      build_args: { GAME_MODE: 'release' },
      env: { LOG_LEVEL: 'info' },
      ports: { default: { port: 7777, protocol: 'udp' }, http: { port: 8443, protocol: 'https' } },
    });
    expect((mm.game_modes as Record<string, unknown>).ranked).toEqual({ max_players: 2, tier: 'basic-2d1', docker: { image: 'my-game:ranked-prod' } });
  });

  it('replaces lists whole, and a null in the overlay replaces the value', async () => {
    write('rivet.json', JSON.stringify({ matchmaker: { docker: { args: ['--a', '--b'], image_id: 'x' }, tier: 'basic-1d1' } }));
    write('rivet.dev.json', JSON.stringify({ matchmaker: { docker: { args: ['--c'] }, tier: null } }));
    expect((await load({ namespace: 'dev' })).config).toEqual({ matchmaker: { docker: { args: ['--c'], image_id: 'x' }, tier: null } });
  });

  it('is skipped when there is no overlay file for the namespace', async () => {
    write('rivet.yaml', RIVET_YAML);
    const { config, files } = await load({ namespace: 'staging' });
    expect(files).toEqual([path.join(dir, 'rivet.yaml')]);
    expect(config).toEqual(EXPECTED);
  });

  it('refuses two overlays for one namespace, and a namespace that is not a name', async () => {
    write('rivet.yaml', RIVET_YAML);
    write('rivet.prod.yaml', 'kv: {}\n');
    write('rivet.prod.json', '{}');
    expect(await failure({ namespace: 'prod' })).toMatch(/more than one Rivet config in .*: rivet\.prod\.yaml, rivet\.prod\.json$/);
    expect(await failure({ namespace: '../x' })).toMatch(/a namespace is letters/);
  });
});

describe('loadProjectConfig: -c', () => {
  it('reads the named file (relative to cwd) by its extension, and its overlay beside it', async () => {
    fs.mkdirSync(path.join(dir, 'deploy'));
    write('rivet.yaml', 'kv: {}\n'); // not read: -c names the file
    write('deploy/game.yml', RIVET_YAML);
    write('deploy/game.prod.json', '{"matchmaker": {"max_players": 64}}');
    const { config, files } = await load({ dir: '/nonexistent', cwd: dir, configFile: 'deploy/game.yml', namespace: 'prod' });
    expect(files).toEqual(['deploy/game.yml', path.join('deploy', 'game.prod.json')]);
    expect((config.matchmaker as Record<string, unknown>).max_players).toBe(64);
    expect(config.cdn).toEqual(EXPECTED.cdn);
  });

  it('says what is wrong with the named file', async () => {
    expect(await failure({ cwd: dir, configFile: 'missing.toml' })).toBe('cannot read missing.toml: no such file');
    write('rivet.ini', 'x=1');
    expect(await failure({ cwd: dir, configFile: 'rivet.ini' })).toBe('-c rivet.ini: a config file ends in .yaml, .yml, .toml or .json');
  });
});

describe('loadProjectConfig: -o overrides', () => {
  it('sets dotted paths with JSON values after the files, creating what is missing', async () => {
    write('rivet.yaml', RIVET_YAML);
    write('rivet.prod.yaml', 'matchmaker:\n  max_players: 32\n');
    const { config } = await load({
      namespace: 'prod',
      overrides: [
        'matchmaker.max_players=16',
        'matchmaker.game_modes.default.docker.image_id="3f2b1c4e-0000-4000-8000-000000000001"',
        'matchmaker.docker.ports={"game":{"port":9000,"protocol":"udp"}}',
        'matchmaker.regions=null',
        'cdn.build_output="public"',
        'identity.custom_display_names=[{"display_name":"Guest"}]',
      ],
    });
    const mm = config.matchmaker as Record<string, any>;
    expect(mm.max_players).toBe(16);
    expect(mm.game_modes.default).toEqual({ docker: { image_id: '3f2b1c4e-0000-4000-8000-000000000001' } });
    // An object is merged as config-rs's set_override merges it: the other ports stay.
    expect(Object.keys(mm.docker.ports)).toEqual(['default', 'http', 'game']);
    expect(mm.regions).toBeNull();
    expect(config.cdn).toEqual({ build_command: "echo 'Hello, world!' > dist/index.html", build_output: 'public' });
    expect(config.identity).toEqual({ custom_display_names: [{ display_name: 'Guest' }] });
  });

  it('replaces a scalar parent with a mapping', async () => {
    write('rivet.json', '{"matchmaker": {"docker": "oops"}}');
    expect((await load({ overrides: ['matchmaker.docker.image_id="x"'] })).config).toEqual({ matchmaker: { docker: { image_id: 'x' } } });
  });

  it.each([
    ['matchmaker.docker.image_id=abc', /^-o matchmaker\.docker\.image_id=abc: the value is not JSON \(unexpected "a"\)$/],
    ['matchmaker.max_players=', /^-o matchmaker\.max_players=: the value is not JSON \(unexpected end of the text\)$/],
    ['matchmaker.max_players=16 17', /the value is not JSON \(unexpected text after the end of the JSON value\)/],
    ['matchmaker.max_players=9007199254740993', /integer 9007199254740993 is beyond 2\^53/],
    ['matchmaker.max_players', /^-o matchmaker\.max_players: an override is key=<json>$/],
    ['matchmaker..max_players=1', /is not a dotted key path/],
    ['matchmaker.game_modes[0]=1', /list indexes/],
  ])('refuses %s in one line naming it', async (arg, want) => {
    write('rivet.yaml', RIVET_YAML);
    const message = await failure({ overrides: [arg] });
    expect(message).toMatch(want);
    expect(message).not.toContain('\n');
  });

  it('refuses a bad override before reading any file', async () => {
    expect(await failure({ overrides: ['x=nope'] })).toMatch(/^-o x=nope/);
  });
});

describe('loadProjectConfig: syntax errors name file, line and column', () => {
  it.each([
    ['rivet.yaml', 'matchmaker:\n  max_players: 16\n  docker: [1,\ncdn: {}\n', /^rivet\.yaml:4:1: Flow sequence in block collection must be sufficiently indented and end with a \]$/],
    ['rivet.yaml', 'matchmaker:\n  max_players: 16\n  max_players: 8\n', /^rivet\.yaml:3:3: Map keys must be unique$/],
    ['rivet.yaml', 'a: 1\n---\nb: 2\n', /^rivet\.yaml:2:1: Source contains multiple documents/],
    ['rivet.toml', '[matchmaker]\nmax_players = 16\ntier = basic-1d1\n', /^rivet\.toml:3:8: /],
    ['rivet.toml', '[matchmaker]\n[matchmaker]\n', /^rivet\.toml:2:\d+: /],
    ['rivet.json', '{\n  "matchmaker": {\n    "max_players": 16,\n  }\n}\n', /^rivet\.json:4:3: expected a key in double quotes$/],
    ['rivet.json', '{\n  "matchmaker": { "tier": basic }\n}', /^rivet\.json:2:27: unexpected "b"$/],
    ['rivet.json', '', /^rivet\.json:1:1: unexpected end of the text$/],
  ])('%s: %j', async (name, text, want) => {
    write(name, text);
    const message = await failure({ cwd: dir, dir: '.' });
    expect(message).toMatch(want);
    expect(message).not.toContain('\n');
  });
});

describe('loadProjectConfig: integers beyond 2^53 are refused, never rounded', () => {
  it.each([
    ['rivet.yaml', 'matchmaker:\n  max_players: 9007199254740993\n', 'rivet.yaml:2:16: integer 9007199254740993 is beyond 2^53 and would lose precision; write it as a string'],
    ['rivet.yaml', 'kv:\n  n: -9007199254740993\n', 'rivet.yaml:2:6: integer -9007199254740993 is beyond 2^53 and would lose precision; write it as a string'],
    ['rivet.toml', '[matchmaker]\nmax_players = 9007199254740993\n', 'rivet.toml:2:15: integer value cannot be represented losslessly'],
    ['rivet.json', '{"matchmaker": {\n "max_players": 9007199254740993}}', 'rivet.json:2:17: integer 9007199254740993 is beyond 2^53 and would lose precision; write it as a string'],
  ])('%s', async (name, text, want) => {
    write(name, text);
    expect(await failure({ cwd: dir, dir: '.' })).toBe(want);
  });

  it('keeps the largest exact integer, and floats as they are', async () => {
    write('rivet.yaml', 'a: 9007199254740991\nb: 0x10\nc: 1.5e3\n');
    expect((await load()).config).toEqual({ a: 9007199254740991, b: 16, c: 1500 });
    write('rivet.yaml', ''); // keep one file in the folder
    fs.rmSync(path.join(dir, 'rivet.yaml'));
    write('rivet.json', '{"a": 9007199254740991, "b": 1e300, "c": 12345678901234567890.5}');
    expect((await load()).config).toEqual({ a: 9007199254740991, b: 1e300, c: 12345678901234567000 });
  });
});

describe('loadProjectConfig: values JSON cannot hold', () => {
  it('refuses YAML tags it cannot turn into JSON, with the line', async () => {
    write('rivet.yaml', 'matchmaker:\n  tier: !custom basic-1d1\n');
    expect(await failure({ cwd: dir, dir: '.' })).toBe('rivet.yaml:2:9: Unresolved tag: !custom');
    write('rivet.yaml', 'kv:\n  blob: !!binary aGk=\n');
    expect(await failure({ cwd: dir, dir: '.' })).toBe('rivet.yaml:2:18: tag:yaml.org,2002:binary is not a JSON value; write a string');
    write('rivet.yaml', 'kv:\n  s: !!set { a, b }\n');
    expect(await failure({ cwd: dir, dir: '.' })).toBe('rivet.yaml:2:12: tag:yaml.org,2002:set is not a JSON value; write a mapping');
    write('rivet.yaml', 'kv:\n  n: .inf\n');
    expect(await failure({ cwd: dir, dir: '.' })).toBe('rivet.yaml:2:6: .inf is not a number JSON can hold');
  });

  it('reads YAML 1.2 dates and yes/no as strings, and TOML dates as their TOML text (as config-rs does)', async () => {
    write('rivet.yaml', 'a: 2024-07-11\nb: yes\n');
    expect((await load()).config).toEqual({ a: '2024-07-11', b: 'yes' });
    fs.rmSync(path.join(dir, 'rivet.yaml'));
    write('rivet.toml', 'a = 2024-07-11\nb = 2024-07-11T10:00:00Z\n');
    expect((await load()).config).toEqual({ a: '2024-07-11', b: '2024-07-11T10:00:00.000Z' });
  });

  it('refuses TOML inf and nan by key path', async () => {
    write('rivet.toml', '[kv]\nx = inf\n');
    expect(await failure({ cwd: dir, dir: '.' })).toBe('rivet.toml: kv.x is Infinity, which JSON cannot hold');
  });

  it('keeps a key named __proto__ as a key', async () => {
    write('rivet.json', '{"kv": {"__proto__": {"x": 1}}}');
    const { config } = await load({ overrides: ['kv.__proto__.y=2'] });
    expect(Object.keys(config.kv as object)).toEqual(['__proto__']);
    expect(JSON.stringify(config)).toBe('{"kv":{"__proto__":{"x":1,"y":2}}}');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});

describe('dockerSources', () => {
  it('lists every docker block and what it names, as deploy builds them', async () => {
    write('rivet.yaml', RIVET_YAML);
    const { config } = await load({ overrides: ['matchmaker.game_modes.pinned={"docker":{"image_id":"3f2b1c4e-0000-4000-8000-000000000001","image":"ignored"}}'] });
    expect(dockerSources(config)).toEqual([
      { path: 'matchmaker.docker', kind: 'dockerfile', dockerfile: 'Dockerfile.test', buildArgs: { GAME_MODE: 'release' } },
      { path: 'matchmaker.game_modes.ranked.docker', gameMode: 'ranked', kind: 'image', image: 'my-game:ranked' },
      { path: 'matchmaker.game_modes.custom.docker', gameMode: 'custom', kind: 'top_level' },
      { path: 'matchmaker.game_modes.pinned.docker', gameMode: 'pinned', kind: 'image_id', imageId: '3f2b1c4e-0000-4000-8000-000000000001' },
    ]);
  });

  it('prefers a dockerfile to an image, and says none when there is no top-level block to inherit', () => {
    expect(
      dockerSources({ matchmaker: { game_modes: { a: { docker: { image: 'x', dockerfile: 'D', build_args: { N: 1 } } }, b: { docker: { env: { K: 'v' } } }, c: {} } } }),
    ).toEqual([
      { path: 'matchmaker.game_modes.a.docker', gameMode: 'a', kind: 'dockerfile', dockerfile: 'D', buildArgs: { N: '1' } },
      { path: 'matchmaker.game_modes.b.docker', gameMode: 'b', kind: 'none' },
    ]);
    expect(dockerSources({ cdn: {} })).toEqual([]);
  });

  it('refuses blocks of the wrong shape by path', () => {
    expect(() => dockerSources({ matchmaker: { docker: { dockerfile: 7 } } })).toThrow(new UsageError('matchmaker.docker.dockerfile must be a non-empty string, not 7'));
    expect(() => dockerSources({ matchmaker: { game_modes: { a: { docker: [] } } } })).toThrow(/matchmaker\.game_modes\.a\.docker must be a mapping, not a list/);
  });
});
