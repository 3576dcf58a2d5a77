// A database of its own for each test file, on the run's one PostgreSQL server (postgres-server.ts). Where no
// server can be had the PostgreSQL tests skip and say why; under CI they fail instead, as the conformance tests do.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, expect, inject } from 'vitest';
import { isCI } from '../../src/output/ci.js';

const ADMIN_URL = inject('postgres');
if (ADMIN_URL === undefined) {
  // vitest.config.ts puts a file in the `postgres` project, whose set-up starts the server, when the file itself
  // imports this module.
  throw new Error(`${expect.getState().testPath}: import test/helpers/postgres.ts in the test file itself, so that vitest.config.ts runs it with PostgreSQL`);
}
export const PG_PRESENT = ADMIN_URL !== '';

if (!PG_PRESENT && isCI(process.env) && !inject('postgresOff')) {
  throw new Error(`PostgreSQL tests cannot run: ${inject('postgresMissing')}; in CI a server must be there`);
}
if (!PG_PRESENT) console.warn(`PostgreSQL tests skipped: ${inject('postgresMissing')}`);

const made: string[] = [];

async function admin<T>(body: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}

/** A new, empty database on the run's server; its URL. Dropped when the file ends. */
export async function createTestDatabase(): Promise<string> {
  const name = `gamehost_${randomUUID().replace(/-/g, '')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  made.push(name);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Runs one query on a test database (to look at or tamper with what a store wrote). */
export async function queryDatabase<R extends pg.QueryResultRow = any>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

afterAll(async () => {
  if (!PG_PRESENT || made.length === 0) return;
  await admin(async (c) => {
    for (const name of made.splice(0)) await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });
});
