import path from 'node:path';
import type { Context } from '../../context.js';
import { emulatorDir } from '../../config/paths.js';
import { loadEmulatorConfig } from '../../config/emulator-config.js';
import type { EmulatorConfig } from '../../emulator/index.js';
import { UsageError } from '../../errors.js';
import { jsonLine } from '../../output/json.js';
import { renderRecord } from '../../output/record.js';
import { parseInteger } from '../args.js';

export interface ServeOptions {
  host: string;
  port: number;
  dataDir: string;
  config?: Partial<EmulatorConfig>;
}

export function parse(_args: string[], opts: Record<string, unknown>, ctx: Context): ServeOptions {
  const host = String(opts.host ?? '127.0.0.1');
  if (!host) throw new UsageError('--host is empty');
  return {
    host,
    port: parseInteger('--port', opts.port ?? '6420', { min: 0, max: 65535 }),
    dataDir: opts.dataDir !== undefined ? path.resolve(ctx.cwd, String(opts.dataDir)) : emulatorDir(ctx.env),
    config: opts.config !== undefined ? loadEmulatorConfig(path.resolve(ctx.cwd, String(opts.config))) : undefined,
  };
}

export async function run(ctx: Context, o: ServeOptions): Promise<void> {
  const { startEmulator } = await import('../../emulator/index.js');
  const emu = await startEmulator({ dataDir: o.dataDir, host: o.host, port: o.port, config: o.config }).catch((err) => {
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
