// `emulator serve --database` as a user starts it: what it says about its stores, the shared secret, and the one
// line and exit code of each way it can refuse to start.
import { spawn } from 'node:child_process';
import readline from 'node:readline';
import { describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/emulator/stores/postgres.js';
import { tempDir } from '../helpers/cli.js';
import { createTestDatabase, PG_PRESENT, queryDatabase } from '../helpers/postgres.js';
import { serve, SLOW, stopReplica } from '../helpers/replica.js';
import { BUCKET, CREDENTIALS, startS3rver } from '../helpers/s3.js';
import { BIN, runBin } from '../helpers/bin.js';

describe.skipIf(!PG_PRESENT)('emulator serve --database: start-up', SLOW, () => {
  it('--verbose names the stores with the password removed; --env says which stores', async () => {
    const url = new URL(await createTestDatabase());
    const dataDir = tempDir();
    const r = await serve(['--database', url.toString(), '--data-dir', dataDir, '--verbose']);
    try {
      const masked = new URL(url);
      masked.password = '***';
      expect(r.stderr()).toContain(`emulator records: postgres at ${masked.toString()}`);
      expect(r.stderr()).toContain(`emulator bytes: local at ${dataDir}`);
      expect(r.stderr()).not.toContain(`:${url.password}@`);
    } finally {
      await stopReplica(r);
    }
    const child = spawn(process.execPath, [BIN, 'emulator', 'serve', '--port', '0', '--env', '--data-dir', dataDir], {
      env: { PATH: process.env.PATH, GAMEHOST_EMULATOR_DATABASE_URL: url.toString() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Waited for after the stop: the serve writes its data directory until it exits, and the file removes it.
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const first = await new Promise<string>((resolve) => readline.createInterface({ input: child.stdout! }).once('line', resolve));
    child.kill('SIGTERM');
    await exited;
    expect(first).toBe('# stores: records postgres, bytes local');
  });

  it('GAMEHOST_EMULATOR_SECRET signs the tokens of every replica, whatever the database holds', async () => {
    const secret = 'x'.repeat(40);
    const [one, two] = await Promise.all([
      serve(['--database', await createTestDatabase(), '--data-dir', tempDir()], { GAMEHOST_EMULATOR_SECRET: secret }),
      serve(['--data-dir', tempDir()], { GAMEHOST_EMULATOR_SECRET: secret }),
    ]);
    try {
      expect(two.info.tokens).toEqual(one.info.tokens);
      expect(two.info.stores.records).toBe('sqlite');
    } finally {
      await Promise.all([stopReplica(one), stopReplica(two)]);
    }
  });

  it('--bucket beside --database: records in PostgreSQL, the export in the bucket; a bucket that does not answer is one line, exit 1', async () => {
    const s3rver = await startS3rver();
    const url = await createTestDatabase();
    try {
      const env = { ...CREDENTIALS, AWS_ENDPOINT_URL: s3rver.endpoint };
      const r = await serve(['--database', url, '--bucket', `s3://${BUCKET}/both`, '--data-dir', tempDir()], env);
      try {
        expect(r.info.stores).toEqual({ records: 'postgres', bytes: 's3' });
        const auth = { authorization: `Bearer ${r.info.tokens.cloud}`, 'content-type': 'application/json' };
        const created = await fetch(`${r.info.endpoint}/matchmaker/lobbies/create`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"game_mode":"duos"}',
        });
        expect(created.status).toBe(200);
        const exported = await fetch(`${r.info.endpoint}/cloud/games/${r.info.game_id}/matchmaker/lobbies/export-history`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ query_start: Date.now() - 3_600_000, query_end: Date.now() + 60_000 }),
        }).then((res) => res.json() as Promise<{ url: string }>);
        // The URL is the bucket's own, and the CSV behind it names the lobby the database recorded.
        expect(exported.url.startsWith(`${s3rver.endpoint}/${BUCKET}/both/`)).toBe(true);
        expect(await (await fetch(exported.url)).text()).toContain(',duos,');
        expect(await queryDatabase(url, 'SELECT count(*)::int AS n FROM lobbies')).toEqual([{ n: 1 }]);
      } finally {
        await stopReplica(r);
      }
      const missing = await runBin(['emulator', 'serve', '--port', '0', '--database', url, '--bucket', 's3://missing-bucket', '--data-dir', tempDir()], env);
      expect(missing.code).toBe(1);
      // The bucket answered: it is missing, which is not silence.
      expect(missing.stderr).toMatch(/^error: the bucket s3:\/\/missing-bucket\/ at http:\/\/127\.0\.0\.1:\d+ does not exist \(.*\)\n  check the bucket, [^\n]*\n$/);
    } finally {
      await s3rver.close();
    }
  });

  it('each way the database refuses at start is one line and exit 1: SSL asked of a server without it, a wrong password, a missing database', async () => {
    const url = new URL(await createTestDatabase());
    const ssl = new URL(url);
    ssl.searchParams.set('sslmode', 'require');
    const noSsl = await runBin(['emulator', 'serve', '--port', '0', '--database', ssl.toString(), '--data-dir', tempDir()]);
    expect(noSsl.stderr).toBe(
      'error: the database refused: the server does not support SSL connections, and the URL asks for them (sslmode)\n  drop sslmode from --database (or GAMEHOST_EMULATOR_DATABASE_URL), or turn SSL on at the server\n',
    );
    expect(noSsl.code).toBe(1);
    const wrong = new URL(url);
    wrong.password = 'not-the-password';
    const auth = await runBin(['emulator', 'serve', '--port', '0', '--database', wrong.toString(), '--data-dir', tempDir()]);
    expect(auth.code).toBe(1);
    expect(auth.stderr).toMatch(/^error: the database refused: .* \(SQLSTATE 28P01\)\n$/);
    expect(auth.stderr).not.toContain('not-the-password');
    const missingDb = new URL(url);
    missingDb.pathname = '/no_such_database';
    const missing = await runBin(['emulator', 'serve', '--port', '0', '--database', missingDb.toString(), '--data-dir', tempDir()]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: the database refused: database "no_such_database" does not exist \(SQLSTATE 3D000\)\n$/);
  });

  it('refuses a schema newer than it knows: one line, exit 1', async () => {
    const url = await createTestDatabase();
    await (await PostgresStore.open({ connectionString: url })).close();
    await queryDatabase(url, 'UPDATE schema_version SET version = version + 1');
    const run = await runBin(['emulator', 'serve', '--port', '0', '--database', url, '--data-dir', tempDir()]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: the emulator database has schema version \d+, newer than this gamehost knows \(\d+\); upgrade gamehost, or point --database at another database\n$/);
  });

  it('a database that does not answer: one line, exit 5; a URL that is not postgres://: exit 2, the password never shown', async () => {
    const down = await runBin(['emulator', 'serve', '--port', '0', '--database', 'postgres://u:hunter2@127.0.0.1:1/x', '--data-dir', tempDir()]);
    expect(down.code).toBe(5);
    expect(down.stderr).toMatch(/^error: the database does not answer: .*ECONNREFUSED.*\n  check --database \(or GAMEHOST_EMULATOR_DATABASE_URL\) and that the server is up\n$/);
    const bad = await runBin(['emulator', 'serve', '--port', '0', '--database', 'mysql://u:hunter2@h/x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('error: --database must be a postgres:// or postgresql:// URL\n  e.g. postgres://gamehost@db.internal:5432/gamehost\n');
    const fromEnv = await runBin(['emulator', 'serve', '--port', '0'], { GAMEHOST_EMULATOR_DATABASE_URL: 'not a url hunter2' });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).not.toContain('hunter2');
  });
});
