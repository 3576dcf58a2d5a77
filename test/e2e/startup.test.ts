// What a help loads: the start-up budget (bench/startup.js) holds only while --help loads no command's
// implementation. The real executable runs with a module hook that names every module it loads.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, tempDir } from '../helpers/cli.js';
import { useEmulator } from '../helpers/emulator.js';
import { BIN } from '../helpers/bin.js';
import { serve, SLOW, stopReplica } from '../helpers/replica.js';


/** The modules that `gamehost ...args` loads, as paths under dist/, package names, or node's own that it imports by name. */
async function loaded(args: string[], env: Record<string, string | undefined> = isolatedEnv()): Promise<string[]> {
  const dir = tempDir();
  const hooks = path.join(dir, 'hooks.mjs');
  fs.writeFileSync(hooks, 'export async function resolve(s, c, next) { const r = await next(s, c); process._rawDebug("loaded " + r.url); return r; }\n');
  const register = path.join(dir, 'register.mjs');
  // require() (undici is CommonJS) does not pass the ESM hooks: its loads are named from Module._load.
  fs.writeFileSync(
    register,
    `import Module, { register } from 'node:module';\nimport { pathToFileURL } from 'node:url';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n` +
      `const load = Module._load;\nModule._load = function (request, parent, isMain) {\n  const file = Module._resolveFilename(request, parent, isMain);\n` +
      `  if (Module._cache[file]) {}\n` +
      `  else if (file.startsWith('/') || /^[A-Z]:\\\\/i.test(file)) process._rawDebug('loaded ' + pathToFileURL(file).href);\n` +
      `  else if (Module.isBuiltin(file)) process._rawDebug('loaded node:' + file.replace(/^node:/, ''));\n  return load.apply(this, arguments);\n};\n`,
  );
  // Not spawnSync: the emulator a request goes to may be this process's.
  const child = spawn(process.execPath, ['--import', pathToFileURL(register).href, BIN, ...args], { env: { PATH: process.env.PATH, ...env } });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  child.stdout.resume();
  const status = await new Promise((resolve) => child.on('close', resolve));
  const r = { status, stderr };
  expect(r.status, r.stderr).toBe(0);
  const dist = pathToFileURL(path.resolve(__dirname, '../../dist')).href + '/';
  // A chunk of dist/bundle/ (what the bin runs) stands for the modules of dist/ it holds.
  const chunks = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../dist/bundle/modules.json'), 'utf8')) as Record<string, string[]>;
  const modules = [...new Set(r.stderr.split('\n').filter((l) => l.startsWith('loaded file:') || l.startsWith('loaded node:')).map((l) => l.slice('loaded '.length)))]
    .flatMap((url) => (url.startsWith(`${dist}bundle/`) ? (chunks[url.slice(`${dist}bundle/`.length)] ?? [url]) : [url]))
    .map((url) => (url.startsWith(dist) ? url.slice(dist.length) : url.includes('/node_modules/undici/') ? `undici/${url.split('/node_modules/undici/')[1]}` : (/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1] ?? url)));
  return [...new Set(modules)].sort();
}

const HEAVY = /^undici\/|^(node:https?|better-sqlite3|chalk|cli-table3|ora|conf|tar|lz4-napi)$|^(api\/agents|api\/client|api\/transport|emulator\/|output\/views\/|upload\/session|upload\/engine)/;

describe('start-up', () => {
  it('gamehost --help loads neither commander nor any command: bin/gamehost.js answers it with dist/help.cjs', async () => {
    // Beside node's own and the files outside dist/ and the packages (the bin, package.json): that one module.
    for (const args of [['--help'], ['help'], []]) expect((await loaded(args)).filter((m) => !/^(file|node):/.test(m))).toEqual(['help.cjs']);
  });

  it('gamehost --version loads none of the CLI: bin/gamehost.js answers it from package.json', async () => {
    expect((await loaded(['--version'])).filter((m) => !/^(file|node):/.test(m))).toEqual([]);
  });

  it('--version and completion load none of it either', async () => {
    for (const args of [['--version'], ['completion', 'bash']]) expect((await loaded(args)).filter((m) => HEAVY.test(m))).toEqual([]);
  });

  // A request to a service (an emulator in this process), as a script's would be: not the embedded emulator's loads.
  const service = useEmulator();

  it('a request loads the Agent and request API of undici, not the whole package (no proxy, no fetch)', async () => {
    const undici = (await loaded(['stats', '--json'], service.env)).filter((m) => m.startsWith('undici/'));
    expect(undici).toEqual(expect.arrayContaining(['undici/lib/dispatcher/agent.js', 'undici/lib/api/api-request.js', 'undici/lib/dispatcher/client-h1.js']));
    expect(undici.filter((m) => /^undici\/(index\.js|lib\/(dispatcher\/proxy-agent|dispatcher\/client-h2|web\/|mock\/|cache\/|interceptor\/))/.test(m))).toEqual([]);
  });

  it('a plain-http request loads neither HTTP/2 nor TLS (undici offers h2 only when asked, and the CLI never asks)', async () => {
    const modules = await loaded(['stats', '--json'], service.env);
    expect(modules).toContain('node:http');
    expect(modules.filter((m) => /^node:(http2|tls|https|crypto)$/.test(m))).toEqual([]);
  });

  it('a push loads no table renderer: what it prints is a record (cli-table3 and its width tables cost it about 30 ms)', async () => {
    const file = path.join(tempDir(), 'server.tar');
    fs.writeFileSync(file, Buffer.alloc(64 * 1024, 7));
    for (const [i, output] of [['-q'], ['--json'], []].entries()) {
      const modules = await loaded(['build', 'push', file, '--tag', `startup:v${i}`, ...output], service.env);
      expect(modules, output.join(' ')).toContain('output/views/push.js');
      expect(modules.filter((m) => /^(cli-table3|string-width|output\/table\.js|output\/views\/build\.js)$/.test(m)), output.join(' ')).toEqual([]);
    }
  });

  it("a command that finds a serve on its data directory loads none of the emulator's store, routes or services", SLOW, async () => {
    const dataDir = tempDir();
    const r = await serve(['--data-dir', dataDir]);
    try {
      const modules = await loaded(['lobby', 'list', '--json'], isolatedEnv({ GAMEHOST_EMULATOR_DIR: dataDir }));
      // What finding it takes: its record, the process that wrote it, the tokens of the directory's secret (and the
      // store's types and constants those name); no store is opened.
      expect(modules).toContain('emulator/serving.js');
      expect(modules.filter((m) => /^emulator\/(index|routes\/)|^emulator\/stores\/(?!store\.js$)|^better-sqlite3$|^kysely$/.test(m))).toEqual([]);
    } finally {
      await stopReplica(r);
    }
  });

  it('a command help loads that command, not its siblings nor what it runs with', async () => {
    for (const args of [['lobby', 'logs', '--help'], ['--profile', 'build', 'lobby', 'logs', '--help'], ['help', 'lobby', 'logs']]) {
      const commands = (await loaded(args)).filter((m) => m.startsWith('commands/') || HEAVY.test(m));
      expect(commands.sort()).toEqual(['commands/args.js', 'commands/command.js', 'commands/lobby/logs.js', 'commands/program.js']);
    }
  });
});
