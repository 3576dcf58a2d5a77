// What every route handler receives: the services and the one request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Services } from '../services/index.js';
import type { BodyBudget } from './bodies.js';

export interface RequestContext {
  services: Services;
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  /** Path without the query string. */
  path: string;
  query: URLSearchParams;
  params: Record<string, string>;
  rayId: string;
  /** Set once listening; presigned URLs use the request's Host first, this as a fallback. */
  endpoint: string;
  /** What JSON bodies this listener is receiving (request.ts readText). */
  bodies: BodyBudget;
}

export interface Reply {
  status: number;
  json?: unknown;
  body?: string | Buffer;
  headers?: Record<string, string>;
}

export type Handler = (rc: RequestContext) => Reply | Promise<Reply>;
