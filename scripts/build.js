// `npm run build`: compiles src/ into dist/ with tsc, then bundles Kysely into one module in place of the
// re-export tsc made of src/emulator/stores/kysely.ts (loading the package's 280 modules cost each process that
// opens a store about 0.15 s of CPU; one file costs next to nothing). Exits non-zero when either step fails.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

/** tsc -p `project` in a child process: its exit code. */
export function tsc(project) {
  return spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', project], { cwd: ROOT, stdio: 'inherit' }).status ?? 1;
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

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.exitCode = tsc('tsconfig.json');
  if (process.exitCode === 0) await bundleKysely();
}
