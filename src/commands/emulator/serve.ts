import path from 'node:path';
import type { Context } from '../../context.js';
import { emulatorDir } from '../../config/paths.js';
import type { BucketSettings, EmulatorConfig } from '../../emulator/index.js';
import { CliError, ExitCode, RefusedError, ResponseError, UsageError } from '../../errors.js';
import { jsonLine } from '../../output/json.js';
import { bytes, integer, parseChoice } from '../args.js';
import { defineCommand } from '../command.js';
import { dataDirPath, exportLines, gameVariables } from './local.js';

export interface ServeOptions {
  host: string;
  port: number;
  dataDir: string;
  config?: Partial<EmulatorConfig>;
  faults?: string;
  /** A postgres:// URL: the records in PostgreSQL (--database, GAMEHOST_EMULATOR_DATABASE_URL). */
  database?: string;
  /** Builds and exports in this bucket instead of the data directory (--bucket, GAMEHOST_EMULATOR_BUCKET). */
  bucket?: BucketSettings;
  /** The signing secret shared by replicas (GAMEHOST_EMULATOR_SECRET); default: the store's own. */
  secret?: string;
  /** Print `export GAMEHOST_…=…` lines for a shell (--env). */
  env: boolean;
  /** From GAMEHOST_EMULATOR_ADMIN_TOKEN or --admin-token-file; never printed. */
  adminToken?: string;
  tls?: { certFile: string; keyFile: string };
  /** --container-network: bridge (the default) or host. */
  containerNetwork?: 'bridge' | 'host';
}

/**
 * The admin token, from its file (first line, trimmed) or the environment; a usage error when its file is empty,
 * refused (exit 1) when it is too short to be the secret it is.
 */
async function readAdminToken(file: string | undefined, ctx: Pick<Context, 'env' | 'cwd'>): Promise<string | undefined> {
  const token = file === undefined ? ctx.env.GAMEHOST_EMULATOR_ADMIN_TOKEN || undefined : await readAdminTokenFile(file, ctx);
  if (token === undefined) return undefined;
  const { adminTokenProblem } = await import('../../emulator/services/admin.js');
  const problem = adminTokenProblem(token);
  if (problem !== undefined)
    throw new RefusedError(`${file === undefined ? 'GAMEHOST_EMULATOR_ADMIN_TOKEN' : `--admin-token-file ${file}`}: ${problem}; make one with \`openssl rand -hex 32\``);
  return token;
}

async function readAdminTokenFile(file: string, ctx: Pick<Context, 'cwd'>): Promise<string> {
  const { readFileSync } = await import('node:fs');
  const { describeFsError } = await import('../../errors.js');
  let text: string;
  try {
    text = readFileSync(path.resolve(ctx.cwd, file), 'utf8');
  } catch (err) {
    throw new UsageError(`--admin-token-file: cannot read ${file}: ${describeFsError(err)}`);
  }
  const token = text.split(/\r?\n/, 1)[0]!.trim();
  if (!token) throw new UsageError(`--admin-token-file: ${file} is empty`);
  return token;
}

/** How long a stop by signal lets the requests in flight finish before their connections are ended. */
const SHUTDOWN_GRACE_MS = 10_000;

/** What the server needs could not be had: its port, or its stores (a database that does not answer, refuses, or was migrated by a newer gamehost). */
class StoreOpenError extends CliError {
  constructor(
    message: string,
    readonly exitCode: number,
    hint?: string,
  ) {
    super(message);
    this.name = 'StoreOpenError';
    this.hint = hint;
  }
}

/** A database URL as given: postgres:// or postgresql://, else a usage error that never shows its password. */
function parseDatabase(raw: string, from: string): string {
  let protocol = '';
  try {
    protocol = new URL(raw).protocol;
  } catch {
    // Reported below, without echoing what might hold a password.
  }
  if (protocol !== 'postgres:' && protocol !== 'postgresql:')
    throw new UsageError(`${from} must be a postgres:// or postgresql:// URL`, 'e.g. postgres://gamehost@db.internal:5432/gamehost');
  return raw;
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH']);

/** One line for what went wrong opening the stores; anything else stays an unexpected failure. */
function storeOpenError(err: unknown, database: string | undefined): unknown {
  if (!(err instanceof Error)) return err;
  // A store a newer gamehost migrated, on either engine: refused before anything was written to it.
  if (err.name === 'SchemaTooNewError') return new StoreOpenError(err.message, ExitCode.UNEXPECTED);
  if (database === undefined) return err;
  const code = (err as { code?: unknown }).code;
  const unreachable = (typeof code === 'string' && NETWORK_CODES.has(code)) || /timeout|terminated unexpectedly/i.test(err.message);
  if (unreachable) return new StoreOpenError(`the database does not answer: ${err.message || String(code)}`, ExitCode.UNAVAILABLE, 'check --database (or GAMEHOST_EMULATOR_DATABASE_URL) and that the server is up');
  // SQLSTATE codes are five characters: the server answered and refused (authentication, no such database, rights).
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return new StoreOpenError(`the database refused: ${err.message} (SQLSTATE ${code})`, ExitCode.UNEXPECTED);
  if (/does not support SSL/i.test(err.message)) {
    return new StoreOpenError('the database refused: the server does not support SSL connections, and the URL asks for them (sslmode)', ExitCode.UNEXPECTED, 'drop sslmode from --database (or GAMEHOST_EMULATOR_DATABASE_URL), or turn SSL on at the server');
  }
  // A TLS handshake that failed: a certificate the client would not trust, a name that does not match.
  if (typeof code === 'string' && (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|^ERR_TLS|^ERR_SSL/.test(code) || err.message.includes('SSL'))) {
    return new StoreOpenError(`the database's TLS was refused: ${err.message} (${code})`, ExitCode.NETWORK, 'check sslmode and sslrootcert in --database (sslmode=require encrypts without checking the certificate)');
  }
  return err;
}

async function parseFaultsOption(raw: string | undefined): Promise<string | undefined> {
  if (raw === undefined) return undefined;
  const { parseFaults } = await import('../../emulator/faults.js');
  try {
    parseFaults(raw);
  } catch (err) {
    throw new UsageError(`--faults: ${(err as Error).message}`);
  }
  return raw;
}

export default defineCommand({
  summary: 'Run the emulator as a long-lived local server',
  options: [
    { flags: '--host <host>', description: 'address to listen on', default: '127.0.0.1' },
    { flags: '--port <port>', description: 'port to listen on (0 picks a free one)', default: '6420', value: integer({ min: 0, max: 65535 }) },
    { flags: '--data-dir <dir>', description: 'where the emulator keeps its state (default: the user data directory)' },
    { flags: '--config <file>', description: 'JSON file with game modes, regions, delays and limits' },
    { flags: '--readiness <mode>', description: "how lobbies become ready: delay (after the config's delays), manual (when their server calls ready) or run (with --run or --run-build)" },
    { flags: '--run <command>', description: "start each lobby's server with this shell command (its environment as `emulator lobby env` prints it); the lobby is ready when it calls ready" },
    {
      flags: '--run-build [tag]',
      description: "run each lobby's server from a pushed docker_image build in a Docker container: the build with this image tag (name:tag), else the build the lobby's version names for its game mode (gamehost deploy), else the game's newest complete build",
      conflicts: 'run',
    },
    {
      flags: '--container-network <mode>',
      description:
        "with --run-build: bridge (the default: each container isolated on the emulator's network, its ports published, the lobby routes its only API) or host (this host's network, loopback and admin routes included: only for your own build on your own machine)",
    },
    {
      flags: '--max-image-size <bytes>',
      description: "with --run-build: the largest a build's image may unpack to, e.g. 8GiB; a larger one is refused as it loads (default: 4GiB)",
      value: bytes,
    },
    {
      flags: '--pass-env <name>',
      description: "also give lobbies' servers this variable of serve's environment (repeat for more); they get their lobby's RIVET_* and PORT_* variables, PATH, HOME, the locale, TZ and TMPDIR, nothing else",
      repeatable: true,
    },
    { flags: '--replica <name>', description: "this replica's id, the owner of the lobbies whose servers it runs (default: kept in the data directory)" },
    { flags: '--log-retention <time>', description: "how long a stopped lobby's log lines are kept, e.g. 12h or 30d (default: 7d)" },
    { flags: '--part-size <bytes>', description: 'multipart part size, e.g. 64KiB or 1MiB (default: 100MiB; for tests)', value: bytes },
    { flags: '--database <url>', description: 'keep the records in PostgreSQL at this postgres:// URL instead of SQLite in the data directory' },
    { flags: '--bucket <url>', description: 'keep builds and exports in an S3-compatible bucket, s3://bucket[/prefix] (endpoint, region, keys: AWS_* variables)' },
    { flags: '--faults <spec>', description: 'inject failures, e.g. put-error=0.1,put-reset=0.05,latency=50ms,rate-limit=0.05' },
    { flags: '--env', description: 'print export GAMEHOST_…=… lines for a shell instead of the table' },
    { flags: '--admin-token-file <file>', description: 'require this admin token on /_emulator/* (default: GAMEHOST_EMULATOR_ADMIN_TOKEN)' },
    { flags: '--tls-cert <pem>', description: 'serve HTTPS with this certificate chain (re-read on SIGHUP)' },
    { flags: '--tls-key <pem>', description: 'the private key of --tls-cert (re-read on SIGHUP)' },
  ],
  notes:
    'With -q, prints the endpoint alone. On an address other than loopback it needs an admin token ' +
    '(GAMEHOST_EMULATOR_ADMIN_TOKEN or --admin-token-file), which the admin routes then require. ' +
    '--database and --bucket may come from GAMEHOST_EMULATOR_DATABASE_URL and GAMEHOST_EMULATOR_BUCKET. ' +
    'With --readiness manual, a lobby waits for its server, started with `gamehost emulator lobby env`, to call ready. ' +
    'With --run, the emulator starts each lobby\'s server itself, its output in the lobby\'s logs; the server exiting ' +
    'stops the lobby, and a stopped lobby\'s server is stopped (SIGTERM, then SIGKILL after 5 s). ' +
    'With --run-build, each lobby runs a docker_image build pushed to this emulator in a Docker container (found through ' +
    'DOCKER_HOST, the current docker context or the default socket; without one, serve refuses to start, exit 5); containers a killed serve left are ' +
    'removed when serve starts again on the same data directory. oci_bundle builds are not run yet. ' +
    "Each container runs isolated (--container-network bridge): on the emulator's own network, its ports published on --host, " +
    'no capability but binding low ports, a read-only root, its tier\'s memory and CPU weight; it calls the emulator at a ' +
    'listener of the lobby routes alone. --container-network host gives it this host\'s network, loopback and admin routes included.',
  examples: [
    'gamehost emulator serve --env > emulator.env & sleep 1; . ./emulator.env; gamehost stats',
    'gamehost emulator serve --port 0 --data-dir .emulator --json > emulator.json &   # in CI',
    'GAMEHOST_EMULATOR_ADMIN_TOKEN=$(openssl rand -hex 32) AWS_ENDPOINT_URL=http://minio:9000 gamehost emulator serve --host 0.0.0.0 --bucket s3://gamehost/staging --tls-cert cert.pem --tls-key key.pem',
  ],
  async parse(v, ctx): Promise<ServeOptions> {
    if (!v.host) throw new UsageError('--host is empty');
    if (v.env && ctx.global.json) throw new UsageError('give either --env or --json, not both');
    const { checkWholeConfig, loadEmulatorConfig } = await import('../../config/emulator-config.js');
    let config = v.config !== undefined ? loadEmulatorConfig(path.resolve(ctx.cwd, v.config)) : undefined;
    // The flag wins over the config file, as flags do everywhere.
    if (v.partSize !== undefined) config = { ...config, partSize: v.partSize };
    if (v.logRetention !== undefined) config = { ...config, logRetentionMs: (await import('../../timeparse.js')).parseDuration('--log-retention', v.logRetention) };
    if (v.readiness !== undefined) {
      const { READINESS_MODES } = await import('../../emulator/config.js');
      config = { ...config, readiness: parseChoice('--readiness', v.readiness, READINESS_MODES) };
    }
    if (v.run !== undefined) {
      if (v.readiness !== undefined && v.readiness !== 'run') throw new UsageError(`--run goes with --readiness run, not ${v.readiness}`);
      if (!v.run.trim()) throw new UsageError('--run is empty', "e.g. --run 'node server.js'");
      config = { ...config, readiness: 'run', run: v.run, runBuild: null };
    } else if (v.runBuild !== undefined) {
      if (v.readiness !== undefined && v.readiness !== 'run') throw new UsageError(`--run-build goes with --readiness run, not ${v.readiness}`);
      const tag = v.runBuild === true ? true : (await import('../build/push.js')).validateTag(v.runBuild, '--run-build');
      config = { ...config, readiness: 'run', run: null, runBuild: tag };
    } else if (config?.readiness === 'run' && !config.run && !config.runBuild && !Object.values(config.gameModeSettings ?? {}).some((m) => m.run !== undefined)) {
      throw new UsageError('--readiness run needs what runs a lobby\'s server: --run <command> or --run-build [tag] (or "run" or "runBuild" in --config)');
    }
    if (v.maxImageSize !== undefined) {
      if (v.runBuild === undefined && !config?.runBuild) throw new UsageError('--max-image-size goes with --run-build');
      config = { ...config, maxImageBytes: v.maxImageSize };
    }
    // The file and the flags together: every game mode has a command (its own, or --run).
    if (config?.readiness === 'run') checkWholeConfig(config, v.config === undefined ? 'emulator config' : `emulator config ${v.config}`);
    let containerNetwork: ServeOptions['containerNetwork'];
    if (v.containerNetwork !== undefined) {
      containerNetwork = parseChoice('--container-network', v.containerNetwork, ['bridge', 'host'] as const);
      if (!config?.runBuild) throw new UsageError('--container-network goes with --run-build: only a pushed build runs in a container');
    }
    if (v.passEnv !== undefined) {
      const { passEnvProblem } = await import('../../emulator/config.js');
      for (const name of v.passEnv) {
        const problem = passEnvProblem(name);
        if (problem !== undefined) throw new UsageError(`--pass-env: ${problem}`);
      }
      if (config?.readiness !== 'run') throw new UsageError('--pass-env goes with what runs lobbies\' servers: --run or --run-build');
      config = { ...config, passEnv: [...new Set([...(config.passEnv ?? []), ...v.passEnv])] };
    }
    if (v.replica !== undefined) {
      const { REPLICA_NAME } = await import('../../emulator/config.js');
      if (!REPLICA_NAME.test(v.replica)) throw new UsageError(`--replica "${v.replica}" must be 1 to 63 letters, digits, ".", "_" or "-", starting with a letter or digit`, 'e.g. --replica staging-1');
      config = { ...config, replica: v.replica };
    }
    if ((v.tlsCert === undefined) !== (v.tlsKey === undefined)) throw new UsageError('--tls-cert and --tls-key go together: give both');
    const adminToken = await readAdminToken(v.adminTokenFile, ctx);
    const { isLoopbackHost } = await import('../../config/endpoint.js');
    // Anyone who reaches the port could create and delete games and stop lobbies: off this machine, not without a token.
    if (adminToken === undefined && !isLoopbackHost(v.host)) {
      throw new UsageError(
        `emulator serve on ${v.host} needs an admin token: set GAMEHOST_EMULATOR_ADMIN_TOKEN or pass --admin-token-file <file> (or serve on --host 127.0.0.1)`,
      );
    }
    const database =
      v.database !== undefined
        ? parseDatabase(v.database, '--database')
        : ctx.env.GAMEHOST_EMULATOR_DATABASE_URL
          ? parseDatabase(ctx.env.GAMEHOST_EMULATOR_DATABASE_URL, 'GAMEHOST_EMULATOR_DATABASE_URL')
          : undefined;
    const secret = ctx.env.GAMEHOST_EMULATOR_SECRET || undefined;
    if (secret !== undefined) {
      const { secretFromText } = await import('../../emulator/stores/open.js');
      try {
        secretFromText(secret);
      } catch (err) {
        throw new UsageError(`GAMEHOST_EMULATOR_SECRET: ${(err as Error).message}`, 'e.g. the output of `openssl rand -hex 32`');
      }
    }
    const bucketUrl = v.bucket ?? (ctx.env.GAMEHOST_EMULATOR_BUCKET || undefined);
    let bucket: BucketSettings | undefined;
    if (bucketUrl !== undefined) {
      const { bucketSettings, checkBucketPartSize, BucketSettingsError } = await import('../../emulator/stores/bucket.js');
      const { DEFAULT_CONFIG } = await import('../../emulator/config.js');
      try {
        bucket = bucketSettings(bucketUrl, ctx.env);
        checkBucketPartSize(config?.partSize ?? DEFAULT_CONFIG.partSize);
      } catch (err) {
        if (err instanceof BucketSettingsError) throw new UsageError(`--bucket: ${err.message}`);
        throw err;
      }
    }
    return {
      host: v.host,
      port: v.port,
      dataDir: v.dataDir !== undefined ? dataDirPath(v.dataDir, ctx.cwd) : emulatorDir(ctx.env),
      config,
      faults: await parseFaultsOption(v.faults),
      database,
      bucket,
      secret,
      env: v.env,
      adminToken,
      tls: v.tlsCert === undefined ? undefined : { certFile: path.resolve(ctx.cwd, v.tlsCert), keyFile: path.resolve(ctx.cwd, v.tlsKey!) },
      containerNetwork,
    };
  },
  run,
});

async function run(ctx: Context, o: ServeOptions): Promise<void> {
  const [{ holdDataDir, startEmulator, BucketSettingsError, EmulatorFailure }, { renderRecord }] = await Promise.all([import('../../emulator/index.js'), import('../../output/record.js')]);
  const { tls } = o;
  const emu = await startEmulator({
    dataDir: o.dataDir,
    database: o.database,
    checkpointThread: true,
    bucket: o.bucket,
    secret: o.secret,
    host: o.host,
    port: o.port,
    config: o.config,
    faults: o.faults,
    adminToken: o.adminToken,
    tls,
    env: ctx.env,
    containerNetwork: o.containerNetwork,
  }).catch(async (err) => {
    if (tls && typeof err?.code === 'string' && (err.code === 'ENOENT' || err.code === 'EACCES' || err.code.startsWith('ERR_OSSL'))) {
      const { describeFsError } = await import('../../errors.js');
      const why = err.code.startsWith('ERR_OSSL') ? `not a certificate and its key (${err.message})` : `${err.path}: ${describeFsError(err)}`;
      throw new UsageError(`--tls-cert/--tls-key: ${why}`);
    }
    // Not a usage error: the command was right, the port is taken (as a database that does not answer: exit 5).
    if (err?.code === 'EADDRINUSE') throw new StoreOpenError(`--port ${o.port} is in use`, ExitCode.UNAVAILABLE, 'pick another with --port, or --port 0 for any free one');
    if (err?.code === 'EADDRNOTAVAIL') throw new UsageError(`--host ${o.host} is not an address of this machine`);
    // --run-build: no Docker daemon answers (what serve needs is not there, as a database that does not answer).
    if (err instanceof Error && err.name === 'RunnerError') throw new StoreOpenError(`--run-build: ${err.message}`, ExitCode.UNAVAILABLE);
    if (err instanceof BucketSettingsError)
      throw new ResponseError(err.message, 'check the bucket, AWS_ENDPOINT_URL (or AWS_ENDPOINT_URL_S3), AWS_REGION and the credentials');
    // Said as the emulator says it: its code is not a driver's.
    if (err instanceof EmulatorFailure) throw err;
    throw storeOpenError(err, o.database);
  });
  // `emulator reset` refuses to delete the data while this server holds it, and embedded commands on it talk to it.
  const { processStart } = await import('../../emulator/runtime/process.js');
  const release = holdDataDir(o.dataDir, emu.endpoint, await processStart(process.pid));
  // SIGHUP: a renewed certificate is taken up without a restart; a bad one is refused and the old one kept.
  const onHangup = () => {
    try {
      emu.reloadTls();
      ctx.info('Reloaded the TLS certificate and key.');
    } catch (err) {
      ctx.warn(`kept the TLS certificate in use: the new one could not be loaded (${(err as Error).message})`);
    }
  };
  if (tls) process.on('SIGHUP', onHangup);
  try {
    const { records, bytes } = emu.stores;
    ctx.verbose(`emulator records: ${records.kind} at ${records.location}`);
    ctx.verbose(`emulator bytes: ${bytes.kind} at ${bytes.location}`);
    const storesLine = `Records in ${records.kind === 'postgres' ? 'PostgreSQL' : 'SQLite'}, bytes in ${bytes.kind === 'local' ? o.dataDir : bytes.location}.`;
    const info = {
      endpoint: emu.endpoint,
      game_id: emu.gameId,
      namespace_id: emu.namespaceId,
      tokens: { cloud: emu.tokens.cloud, public: emu.tokens.public, dev: emu.tokens.dev },
      stores: { records: records.kind, bytes: bytes.kind },
    };
    if (ctx.global.json) {
      ctx.io.stdout.write(jsonLine(info));
    } else if (o.env) {
      // For `eval`/`source`: the variables every command reads, pointing at this emulator.
      // A comment line first, so a sourced file says which stores it came from.
      ctx.io.stdout.write(`# stores: records ${records.kind}, bytes ${bytes.kind}\n` + exportLines(gameVariables(info)));
      ctx.info(`${storesLine} Press Ctrl-C to stop.`);
    } else if (ctx.global.quiet) {
      // -q: the endpoint alone.
      ctx.io.stdout.write(info.endpoint + '\n');
    } else {
      ctx.io.stdout.write(
        renderRecord(ctx, [
          { label: 'Endpoint', key: 'endpoint', value: info.endpoint },
          { label: 'Game', key: 'game_id', value: info.game_id },
          { label: 'Namespace', key: 'namespace_id', value: info.namespace_id },
          { label: 'Cloud token', key: 'cloud_token', value: info.tokens.cloud },
          { label: 'Public token', key: 'public_token', value: info.tokens.public },
          { label: 'Dev token', key: 'dev_token', value: info.tokens.dev },
        ]),
      );
      ctx.info(
        `\n${storesLine} Try:\n  GAMEHOST_ENDPOINT=${info.endpoint} GAMEHOST_TOKEN=<cloud token> ` +
          `GAMEHOST_GAME=${info.game_id} GAMEHOST_NAMESPACE=${info.namespace_id} gamehost stats`,
      );
      ctx.info('(--env prints these as export lines for your shell.)');
      ctx.info('Press Ctrl-C to stop.');
    }
    // Serve until interrupted; a stop by signal is this command's normal end: no new connections, the requests in
    // flight finish (for up to SHUTDOWN_GRACE_MS), then the stores close.
    await new Promise<void>((resolve) => {
      if (ctx.signal.aborted) return resolve();
      ctx.signal.addEventListener('abort', () => resolve(), { once: true });
    });
  } finally {
    process.off('SIGHUP', onHangup);
    release();
    await emu.close({ graceMs: SHUTDOWN_GRACE_MS });
  }
  ctx.info('Emulator stopped.');
}
