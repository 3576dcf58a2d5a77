// The emulator's one way to open SQLite. better-sqlite3 is a native module and an optional dependency: an install
// with --ignore-scripts (or pnpm, which skips build scripts by default) leaves it unbuilt or absent. That is not a
// crash: one line says what is missing and the two ways out.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type Database from 'better-sqlite3';
import { CliError, ExitCode } from '../../errors.js';

type DatabaseConstructor = typeof Database;

const require = createRequire(import.meta.url);
const defaultLoader = (): DatabaseConstructor => require('better-sqlite3') as DatabaseConstructor;
let loader = defaultLoader;

/** Tests replace how the module is loaded (to make it fail); opening and the failure handling stay the same. */
export function setSqliteLoader(load?: () => DatabaseConstructor): void {
  loader = load ?? defaultLoader;
}

/** better-sqlite3 cannot be loaded: not installed, or installed without its native part built. */
export class SqliteUnavailableError extends CliError {
  readonly exitCode = ExitCode.UNEXPECTED;
  constructor(installed: boolean) {
    // The package's own directory, where a rebuild has to run for a global install.
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
    // Each command tried in a clone in that state: rebuild builds a module that is there (install says "up to date");
    // install brings back one npm dropped when its build failed (rebuild finds nothing to build). --no-save leaves
    // package.json alone; --foreground-scripts shows the compiler's output, and so why a build fails.
    super(
      installed
        ? 'the local emulator needs better-sqlite3, whose native part is not built for this Node.js (an install with --ignore-scripts?)'
        : 'the local emulator needs better-sqlite3, which is not installed (npm leaves it out, silently, when its build fails)',
    );
    this.name = 'SqliteUnavailableError';
    const fix = installed ? 'npm rebuild better-sqlite3 --foreground-scripts' : 'npm install better-sqlite3 --no-save --foreground-scripts';
    this.hint = `run \`${fix}\` in ${root} (it shows the build's errors, if any), or use a real service with --endpoint <url>`;
  }
}

const NOT_BUILT = /Could not locate the bindings file|NODE_MODULE_VERSION|was compiled against a different Node\.js|invalid ELF header|dlopen|\.node\b/i;

export function openDatabase(file: string, options: Database.Options): Database.Database {
  let Sqlite: DatabaseConstructor;
  try {
    Sqlite = loader();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException)?.code;
    if ((code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') && /better-sqlite3/.test(String((err as Error).message))) {
      throw new SqliteUnavailableError(false);
    }
    if (NOT_BUILT.test(String((err as Error)?.message))) throw new SqliteUnavailableError(true);
    throw err;
  }
  try {
    // The native part is loaded here, on the first open, not when the package is required.
    return new Sqlite(file, options);
  } catch (err) {
    if (NOT_BUILT.test(String((err as Error)?.message)) && !(err as { code?: string }).code?.startsWith('SQLITE_')) {
      throw new SqliteUnavailableError(true);
    }
    throw err;
  }
}
