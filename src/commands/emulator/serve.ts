import path from 'node:path';
import type { Context } from '../../context.js';
import { emulatorDir } from '../../config/paths.js';
import type { BucketSettings, EmulatorConfig } from '../../emulator/index.js';
import { ResponseError, UsageError } from '../../errors.js';
import { jsonLine } from '../../output/json.js';
import { bytes, integer } from '../args.js';
import { defineCommand } from '../command.js';

export interface ServeOptions {
  host: string;
  port: number;
  dataDir: string;
  config?: Partial<EmulatorConfig>;
  faults?: string;
  /** Builds and exports in this bucket instead of the data directory (--bucket, GAMEHOST_EMULATOR_BUCKET). */
  bucket?: BucketSettings;
  /** Print `export GAMEHOST_…=…` lines for a shell (--env). */
  env: boolean;
}

/** A value quoted for a POSIX shell: single quotes, each ' written as '\''. */
export function shellQuote(value: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
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
    { flags: '--part-size <bytes>', description: 'multipart part size, e.g. 64KiB or 1MiB (default 100MiB; for tests)', value: bytes },
    { flags: '--bucket <url>', description: 'keep builds and exports in an S3-compatible bucket, s3://bucket[/prefix] (endpoint, region, keys: AWS_* variables)' },
    { flags: '--faults <spec>', description: 'inject failures, e.g. put-error=0.1,put-reset=0.05,latency=50ms,rate-limit=0.05' },
    { flags: '--env', description: 'print export GAMEHOST_…=… lines for a shell instead of the table' },
  ],
  notes: 'With -q, prints the endpoint alone.',
  examples: [
    'gamehost emulator serve --env > emulator.env & sleep 1; . ./emulator.env; gamehost stats',
    'gamehost emulator serve --port 0 --data-dir .emulator --json > emulator.json &   # in CI',
    'AWS_ENDPOINT_URL=http://minio:9000 gamehost emulator serve --host 0.0.0.0 --bucket s3://gamehost/staging',
  ],
  async parse(v, ctx): Promise<ServeOptions> {
    if (!v.host) throw new UsageError('--host is empty');
    if (v.env && ctx.global.json) throw new UsageError('give either --env or --json, not both');
    const { loadEmulatorConfig } = await import('../../config/emulator-config.js');
    let config = v.config !== undefined ? loadEmulatorConfig(path.resolve(ctx.cwd, v.config)) : undefined;
    // The flag wins over the config file, as flags do everywhere.
    if (v.partSize !== undefined) config = { ...config, partSize: v.partSize };
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
      dataDir: v.dataDir !== undefined ? path.resolve(ctx.cwd, v.dataDir) : emulatorDir(ctx.env),
      config,
      faults: await parseFaultsOption(v.faults),
      bucket,
      env: v.env,
    };
  },
  run,
});

async function run(ctx: Context, o: ServeOptions): Promise<void> {
  const [{ startEmulator, BucketSettingsError }, { renderRecord }] = await Promise.all([import('../../emulator/index.js'), import('../../output/record.js')]);
  const emu = await startEmulator({ dataDir: o.dataDir, host: o.host, port: o.port, config: o.config, faults: o.faults, bucket: o.bucket }).catch((err) => {
    if (err?.code === 'EADDRINUSE') throw new UsageError(`--port ${o.port} is in use`, 'pick another with --port, or --port 0 for any free one');
    if (err?.code === 'EADDRNOTAVAIL') throw new UsageError(`--host ${o.host} is not an address of this machine`);
    if (err instanceof BucketSettingsError)
      throw new ResponseError(err.message, 'check the bucket, AWS_ENDPOINT_URL (or AWS_ENDPOINT_URL_S3), AWS_REGION and the credentials');
    throw err;
  });
  const info = {
    endpoint: emu.endpoint,
    game_id: emu.gameId,
    namespace_id: emu.namespaceId,
    tokens: { cloud: emu.tokens.cloud, public: emu.tokens.public, dev: emu.tokens.dev },
  };
  if (ctx.global.json) {
    ctx.io.stdout.write(jsonLine(info));
  } else if (o.env) {
    // For `eval`/`source`: the variables every command reads, pointing at this emulator.
    const vars: [string, string][] = [
      ['GAMEHOST_ENDPOINT', info.endpoint],
      ['GAMEHOST_TOKEN', info.tokens.cloud],
      ['GAMEHOST_NAMESPACE_TOKEN', info.tokens.public],
      ['GAMEHOST_GAME', info.game_id],
      ['GAMEHOST_NAMESPACE', info.namespace_id],
    ];
    ctx.io.stdout.write(vars.map(([k, v]) => `export ${k}=${shellQuote(v)}\n`).join(''));
    ctx.info(`Data in ${o.dataDir}. Press Ctrl-C to stop.`);
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
    ctx.info(`\nData in ${o.dataDir}. Try: GAMEHOST_ENDPOINT=${info.endpoint} GAMEHOST_TOKEN=<cloud token> gamehost stats`);
    ctx.info('(--env prints these as export lines for your shell.)');
    ctx.info('Press Ctrl-C to stop.');
  }
  // Serve until interrupted; a stop by signal is this command's normal end.
  await new Promise<void>((resolve) => {
    if (ctx.signal.aborted) return resolve();
    ctx.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await emu.close();
  ctx.info('Emulator stopped.');
}
