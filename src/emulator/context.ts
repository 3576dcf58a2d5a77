// What every handler receives: the shared emulator state and the one request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EmulatorConfig } from './config.js';
import type { DataDirPaths } from './datadir.js';
import type { Store } from './store.js';
import type { TokenClaims } from './tokens.js';
import type { Faults } from './faults.js';

export interface EmulatorState {
  store: Store;
  secret: Buffer;
  config: EmulatorConfig;
  paths: DataDirPaths;
  /** Set once listening; presigned URLs use the request's Host first, this as a fallback. */
  endpoint: string;
  /** Verified bearer tokens (null for bad ones), so a busy client costs one HMAC, not one per request. */
  tokenCache: Map<string, TokenClaims | null>;
  /** Injected failures, when asked for (`--faults`, GAMEHOST_EMULATOR_FAULTS). */
  faults?: Faults;
}

export interface RequestContext {
  emu: EmulatorState;
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  /** Path without the query string. */
  path: string;
  query: URLSearchParams;
  params: Record<string, string>;
  rayId: string;
  /** Milliseconds since the epoch, read once per request. */
  now: number;
}

export interface Reply {
  status: number;
  json?: unknown;
  body?: string | Buffer;
  headers?: Record<string, string>;
}

export type Handler = (rc: RequestContext) => Reply | Promise<Reply>;
