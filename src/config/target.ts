// Where a command talks to, and with which credentials: flag > environment > embedded emulator.
import type { Context } from '../context.js';
import { normalizeEndpoint } from './endpoint.js';
import { emulatorDir } from './paths.js';

export interface Target {
  endpoint: string;
  cloudToken?: string;
  namespaceToken?: string;
  gameId?: string;
  namespaceId?: string;
  /** True when the command runs against the in-process emulator. */
  embedded: boolean;
  close(): Promise<void>;
}

const nothing = async () => {};

export async function resolveTarget(ctx: Context): Promise<Target> {
  const g = ctx.global;
  const env = ctx.env;
  const cloudToken = g.token ?? (env.GAMEHOST_TOKEN || env.RIVET_TOKEN || undefined);
  const namespaceToken = g.namespaceToken ?? (env.GAMEHOST_NAMESPACE_TOKEN || undefined);
  const gameId = g.game ?? (env.GAMEHOST_GAME || undefined);
  const namespaceId = g.namespace ?? (env.GAMEHOST_NAMESPACE || undefined);
  const endpoint = g.endpoint ?? (env.GAMEHOST_ENDPOINT || env.RIVET_API_ENDPOINT || undefined);

  if (endpoint !== undefined) {
    return {
      endpoint: normalizeEndpoint(endpoint, g.insecureHttp),
      cloudToken,
      // The matchmaker calls fall back to the cloud token, as the contract says.
      namespaceToken: namespaceToken ?? cloudToken,
      gameId,
      namespaceId,
      embedded: false,
      close: nothing,
    };
  }

  const { startEmulator } = await import('../emulator/index.js');
  const config = env.GAMEHOST_EMULATOR_CONFIG
    ? (await import('./emulator-config.js')).loadEmulatorConfig(env.GAMEHOST_EMULATOR_CONFIG)
    : undefined;
  const dataDir = emulatorDir(env);
  const emu = await startEmulator({ dataDir, config });
  ctx.info(`Using the local emulator (${dataDir}); set --endpoint or GAMEHOST_ENDPOINT for a real service.`);
  return {
    endpoint: emu.endpoint,
    cloudToken: cloudToken ?? emu.tokens.cloud,
    namespaceToken: namespaceToken ?? g.token ?? emu.tokens.public,
    gameId: gameId ?? emu.gameId,
    namespaceId: namespaceId ?? emu.namespaceId,
    embedded: true,
    close: () => emu.close(),
  };
}
