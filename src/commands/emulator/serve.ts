import path from 'node:path';
import type { Context } from '../../context.js';
import { emulatorDir } from '../../config/paths.js';
import { loadEmulatorConfig } from '../../config/emulator-config.js';
import type { EmulatorConfig } from '../../emulator/index.js';
import { UsageError } from '../../errors.js';
import { parseFaults } from '../../emulator/faults.js';
import { jsonLine } from '../../output/json.js';
import { renderRecord } from '../../output/record.js';
import { parseInteger } from '../args.js';

export interface ServeOptions {
  host: string;
  port: number;
  dataDir: string;
  config?: Partial<EmulatorConfig>;
  faults?: string;
  /** Print `export GAMEHOST_…=…` lines for a shell (--env). */
  env: boolean;
}

/** A value quoted for a POSIX shell: single quotes, each ' written as '\''. */
export function shellQuote(value: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

function parseFaultsOption(raw: unknown): string | undefined {
  if (raw === undefined) return undefined;
  try {
    parseFaults(String(raw));
  } catch (err) {
    throw new UsageError(`--faults: ${(err as Error).message}`);
  }
  return String(raw);
}

const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3 };

/** Bytes, or a whole number with a binary unit: 65536, 64KiB, 5MiB, 1GiB. */
export function parseSize(flag: string, raw: unknown): number {
  const m = /^(\d+)\s*(b|kib|mib|gib)?$/i.exec(String(raw).trim());
  const value = m ? Number(m[1]) * SIZE_UNITS[(m[2] ?? '').toLowerCase()]! : NaN;
  if (!Number.isSafeInteger(value) || value < 1)
    throw new UsageError(`${flag} must be a positive size in bytes, or with KiB, MiB or GiB, not "${raw}"`);
  return value;
}

export function parse(_args: string[], opts: Record<string, unknown>, ctx: Context): ServeOptions {
  const host = String(opts.host ?? '127.0.0.1');
  if (!host) throw new UsageError('--host is empty');
  if (opts.env === true && ctx.global.json) throw new UsageError('give either --env or --json, not both');
  let config = opts.config !== undefined ? loadEmulatorConfig(path.resolve(ctx.cwd, String(opts.config))) : undefined;
  // The flag wins over the config file, as flags do everywhere.
  if (opts.partSize !== undefined) config = { ...config, partSize: parseSize('--part-size', opts.partSize) };
  return {
    host,
    port: parseInteger('--port', opts.port ?? '6420', { min: 0, max: 65535 }),
    dataDir: opts.dataDir !== undefined ? path.resolve(ctx.cwd, String(opts.dataDir)) : emulatorDir(ctx.env),
    config,
    faults: parseFaultsOption(opts.faults),
    env: opts.env === true,
  };
}

export async function run(ctx: Context, o: ServeOptions): Promise<void> {
  const { startEmulator } = await import('../../emulator/index.js');
  const emu = await startEmulator({ dataDir: o.dataDir, host: o.host, port: o.port, config: o.config, faults: o.faults }).catch((err) => {
    if (err?.code === 'EADDRINUSE') throw new UsageError(`--port ${o.port} is in use`, 'pick another with --port, or --port 0 for any free one');
    if (err?.code === 'EADDRNOTAVAIL') throw new UsageError(`--host ${o.host} is not an address of this machine`);
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
