// `npm run build`: compiles src/ into dist/ with tsc, then bundles Kysely into one module in place of the
// re-export tsc made of src/emulator/stores/kysely.ts (loading the package's 280 modules cost each process that
// opens a store about 0.15 s of CPU; one file costs next to nothing), then the CLI into dist/bundle/, which
// bin/gamehost.js runs. Exits non-zero when a step fails.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

/** TypeScript's tsc, a Node script that runs its native compiler (typescript's exports leave bin/ out). */
export const TSC = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');

/** tsc -p `project` in a child process: its exit code. */
export function tsc(project) {
  return spawnSync(process.execPath, [TSC, '-p', project], { cwd: ROOT, stdio: 'inherit' }).status ?? 1;
}

/** Kysely's ES modules as one, written where tsc wrote the re-export. */
export async function bundleKysely() {
  const { rolldown } = await import('rolldown');
  // Its ES module entry, as `import 'kysely'` finds it.
  const input = fileURLToPath(import.meta.resolve('kysely'));
  const bundle = await rolldown({ input, platform: 'node', logLevel: 'silent' });
  await bundle.write({ file: path.join(ROOT, 'dist', 'emulator', 'stores', 'kysely.js'), format: 'esm', sourcemap: false });
  await bundle.close();
}

const BUNDLE = path.join(ROOT, 'dist', 'bundle');

/** `file` and the modules of dist/ it imports statically, and theirs (tsc keeps `import … from './x.js'` as written). */
function staticImports(file, seen = new Set()) {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const [, spec] of fs.readFileSync(file, 'utf8').matchAll(/^(?:import|export)\s(?:[^;]*?\sfrom\s)?'(\.{1,2}\/[^']+)'/gm)) staticImports(path.resolve(path.dirname(file), spec), seen);
  return seen;
}

/**
 * dist/cli.js and all of dist/ it imports as chunks in dist/bundle/ (rolldown; packages left to Node): an embedded
 * command loads the emulator's modules as one chunk, not each read, resolved and compiled apart (13-15% less CPU, see
 * docs/development.md), and what a command needs to call the service as another. The rest stay a chunk a module, as
 * each lazily imported module (a command) heads its own part of them, so a command still loads only what it uses.
 * modules.json names each chunk's modules (startup.test.ts reads it). Written to a new directory, then put in place,
 * so a failed bundle leaves the last one whole.
 */
export async function bundleCli() {
  const { rolldown } = await import('rolldown');
  const dist = path.join(ROOT, 'dist');
  const next = `${BUNDLE}.next`;
  fs.rmSync(next, { recursive: true, force: true });
  // What an embedded command loads to run the emulator in its process, as one chunk, less the modules the rest of the
  // CLI loads without it: what it imports, and what it imports lazily but the emulator itself (finding a serve, say),
  // with all they import. Those stay chunks of their own.
  const index = path.join(dist, 'emulator', 'index.js');
  const apart = new Set();
  for (const name of fs.readdirSync(dist, { recursive: true, encoding: 'utf8' })) {
    const file = path.join(dist, name);
    if (!name.endsWith('.js') || name.startsWith(`bundle${path.sep}`) || name.startsWith(`emulator${path.sep}`)) continue;
    staticImports(file, apart);
    for (const [, spec] of fs.readFileSync(file, 'utf8').matchAll(/\bimport\(\s*'(\.{1,2}\/[^']+)'\s*\)/g)) {
      const target = path.resolve(path.dirname(file), spec);
      // (A text that only looks like one, in a comment, names no file here.)
      if (target !== index && fs.existsSync(target)) staticImports(target, apart);
    }
  }
  const emulator = new Set([...staticImports(index)].filter((f) => !apart.has(f)));
  // What a command's action loads to call the service (the API client, the target from flags, environment and
  // profile) as one chunk too, less what a command loads without calling anything: what the program, the commands' own
  // modules and every action's context import.
  const offline = staticImports(path.join(dist, 'context.js'), staticImports(path.join(dist, 'cli.js')));
  for (const name of fs.readdirSync(path.join(dist, 'commands'), { recursive: true, encoding: 'utf8' })) {
    if (name.endsWith('.js')) staticImports(path.join(dist, 'commands', name), offline);
  }
  const request = new Set();
  for (const root of ['api/client.js', 'api/operations.js', 'config/target.js']) staticImports(path.join(dist, root), request);
  for (const file of request) if (offline.has(file) || emulator.has(file)) request.delete(file);
  const bundle = await rolldown({
    input: { cli: path.join(dist, 'cli.js') },
    platform: 'node',
    logLevel: 'warn',
    external: (id) => isBuiltin(id) || !/^[./]/.test(id),
    // The entry chunk exports what it needs beside main, rather than a facade re-exporting it.
    preserveEntrySignatures: 'allow-extension',
    // A lazy import of a module in a group's chunk loads that chunk; that is what the groups are for, not a warning.
    checks: { ineffectiveDynamicImport: false },
  });
  const { output } = await bundle.write({
    dir: next,
    format: 'esm',
    sourcemap: false,
    entryFileNames: '[name].js',
    chunkFileNames: '[name]-[hash].js',
    codeSplitting: {
      includeDependenciesRecursively: false,
      groups: [
        { debugName: 'emulator', name: (id) => (emulator.has(id) ? 'emulator' : null) },
        { debugName: 'request', name: (id) => (request.has(id) ? 'request' : null) },
      ],
    },
  });
  await bundle.close();
  const modules = Object.fromEntries(
    output.filter((o) => o.type === 'chunk').map((c) => [c.fileName, c.moduleIds.filter((id) => id.startsWith(dist + path.sep)).map((id) => path.relative(dist, id).split(path.sep).join('/'))]),
  );
  fs.writeFileSync(path.join(next, 'modules.json'), `${JSON.stringify(modules, null, 1)}\n`);
  fs.rmSync(BUNDLE, { recursive: true, force: true });
  fs.renameSync(next, BUNDLE);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.exitCode = tsc('tsconfig.json');
  if (process.exitCode === 0) {
    await bundleKysely();
    await bundleCli();
  }
}
