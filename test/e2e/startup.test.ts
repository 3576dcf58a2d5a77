// What a help loads: the start-up budget (bench/startup.js) holds only while --help loads no command's
// implementation. The real executable runs with a module hook that names every module it loads.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, tempDir } from '../helpers/cli.js';

const BIN = path.resolve(__dirname, '../../bin/gamehost.js');

/** The modules that `gamehost ...args` loads, as paths under dist/, package names, or node's own that it imports by name. */
function loaded(args: string[]): string[] {
  const dir = tempDir();
  const hooks = path.join(dir, 'hooks.mjs');
  fs.writeFileSync(hooks, 'export async function resolve(s, c, next) { const r = await next(s, c); process._rawDebug("loaded " + r.url); return r; }\n');
  const register = path.join(dir, 'register.mjs');
  // require() (undici is CommonJS) does not pass the ESM hooks: its loads are named from Module._load.
  fs.writeFileSync(
    register,
    `import Module, { register } from 'node:module';\nimport { pathToFileURL } from 'node:url';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n` +
      `const load = Module._load;\nModule._load = function (request, parent, isMain) {\n  const file = Module._resolveFilename(request, parent, isMain);\n` +
      `  if (file.startsWith('/') || /^[A-Z]:\\\\/i.test(file)) process._rawDebug('loaded ' + pathToFileURL(file).href);\n  return load.apply(this, arguments);\n};\n`,
  );
  const r = spawnSync(process.execPath, ['--import', pathToFileURL(register).href, BIN, ...args], {
    env: { PATH: process.env.PATH, ...isolatedEnv() },
    encoding: 'utf8',
  });
  expect(r.status).toBe(0);
  const dist = pathToFileURL(path.resolve(__dirname, '../../dist')).href + '/';
  return [...new Set(r.stderr.split('\n').filter((l) => l.startsWith('loaded file:') || l.startsWith('loaded node:')).map((l) => l.slice('loaded '.length)))]
    .map((url) => (url.startsWith(dist) ? url.slice(dist.length) : url.includes('/node_modules/undici/') ? `undici/${url.split('/node_modules/undici/')[1]}` : (/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1] ?? url)))
    .sort();
}

const HEAVY = /^undici\/|^(node:https?|better-sqlite3|chalk|cli-table3|ora|conf|tar|lz4-napi)$|^(api\/agents|api\/client|api\/transport|emulator\/|output\/views\/|upload\/session|upload\/engine)/;

describe('start-up', () => {
  it('gamehost --help loads the top-level definitions it lists, and no implementation', () => {
    const modules = loaded(['--help']);
    expect(modules.filter((m) => HEAVY.test(m))).toEqual([]);
    const commands = modules.filter((m) => m.startsWith('commands/'));
    expect(commands).toEqual(expect.arrayContaining(['commands/stats.js', 'commands/login.js', 'commands/completion.js']));
    // Commands under a group are listed by the group's help, not the program's.
    expect(commands).not.toContain('commands/build/push.js');
    expect(commands).not.toContain('commands/lobby/create.js');
  });

  it('--version and completion load none of it either', () => {
    for (const args of [['--version'], ['completion', 'bash']]) expect(loaded(args).filter((m) => HEAVY.test(m))).toEqual([]);
  });

  it('a request loads the Agent and request API of undici, not the whole package (no proxy, no fetch)', () => {
    const undici = loaded(['stats', '--json']).filter((m) => m.startsWith('undici/'));
    expect(undici).toEqual(expect.arrayContaining(['undici/lib/dispatcher/agent.js', 'undici/lib/api/api-request.js', 'undici/lib/dispatcher/client-h1.js']));
    expect(undici.filter((m) => /^undici\/(index\.js|lib\/(dispatcher\/proxy-agent|web\/|mock\/|cache\/|interceptor\/))/.test(m))).toEqual([]);
  });

  it('a command help loads that command, not its siblings nor what it runs with', () => {
    for (const args of [['lobby', 'logs', '--help'], ['--profile', 'build', 'lobby', 'logs', '--help'], ['help', 'lobby', 'logs']]) {
      const commands = loaded(args).filter((m) => m.startsWith('commands/') || HEAVY.test(m));
      expect(commands.sort()).toEqual(['commands/args.js', 'commands/command.js', 'commands/lobby/logs.js', 'commands/program.js']);
    }
  });
});
