// The published spec (../shared/reference/rivet-openapi.yml) as a validator of the emulator's answers and of the
// CLI's requests. Tolerates exactly the deviations of src/emulator/deviations.ts, and records which it needed.
import fs from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import AjvModule, { type ErrorObject, type ValidateFunction } from 'ajv';
import { parse } from 'yaml';
import { DEVIATIONS, type Deviation } from '../../src/emulator/deviations.js';
import { isCI } from '../../src/output/ci.js';

export const REPO_ROOT = path.resolve(import.meta.dirname, '../..');
export const SPEC_FILE = path.resolve(REPO_ROOT, '../shared/reference/rivet-openapi.yml');
export const SPEC_PRESENT = fs.existsSync(SPEC_FILE);
// CI has the spec beside the clone, so there a missing spec fails the run instead of skipping the tests quietly.
if (!SPEC_PRESENT && isCI(process.env)) {
  throw new Error(`conformance tests cannot run: ${SPEC_FILE} is absent, and in CI it must be there (check out ../shared beside the clone)`);
}
if (!SPEC_PRESENT) {
  console.warn(`conformance tests skipped: ${SPEC_FILE} is absent (this clone is outside the workspace that holds ../shared)`);
}

/** The operations of the service the emulator serves, by the spec's operationId. */
export const OPERATIONS = [
  'matchmaker_lobbies_create',
  'matchmaker_players_getStatistics',
  'cloud_games_namespaces_logs_getNamespaceLobby',
  'cloud_games_getGameById',
  'cloud_games_matchmaker_exportMatchmakerLobbyHistory',
  'cloud_games_builds_createGameBuild',
  'cloud_uploads_completeUpload',
  'cloud_games_namespaces_createGameNamespaceTokenPublic',
  'cloud_games_matchmaker_getLobbyLogs',
  'cloud_games_matchmaker_exportLobbyLogs',
  'matchmaker_lobbies_find',
  'matchmaker_lobbies_join',
  'matchmaker_lobbies_list',
  'matchmaker_regions_list',
  'matchmaker_lobbies_ready',
  'matchmaker_lobbies_setClosed',
  'matchmaker_lobbies_setState',
  'matchmaker_lobbies_getState',
  'matchmaker_players_connected',
  'matchmaker_players_disconnected',
  'cloud_games_namespaces_createGameNamespace',
  'cloud_games_namespaces_getGameNamespaceById',
  'cloud_games_namespaces_updateGameNamespaceVersion',
  'cloud_games_namespaces_GetGameNamespaceVersionHistoryList',
  'cloud_games_namespaces_updateGameNamespaceMatchmakerConfig',
  'cloud_games_namespaces_createGameNamespaceTokenDevelopment',
  'cloud_games_versions_getGameVersionById',
  'cloud_games_versions_validateGameVersion',
  'cloud_games_versions_reserveVersionName',
  'cloud_games_versions_createGameVersion',
] as const;

/** What only a lobby's server calls (with its lobby token): the CLI never does. */
export const SERVER_OPERATIONS: readonly string[] = [
  'matchmaker_lobbies_ready',
  'matchmaker_lobbies_setClosed',
  'matchmaker_lobbies_setState',
  'matchmaker_lobbies_getState',
  'matchmaker_players_connected',
  'matchmaker_players_disconnected',
];

export interface Operation {
  id: string;
  method: string;
  template: string;
  pattern: RegExp;
  pathParams: { name: string; validate: ValidateFunction }[];
  /** Status → the body's validator, or null when the spec declares no body. */
  responses: Map<number, ValidateFunction | null>;
  request?: ValidateFunction;
  /** Every operation but lobby create (tokenless) needs a bearer token. */
  needsToken: boolean;
}

export interface Exchange {
  method: string;
  /** Path and query, as sent. */
  url: string;
  requestHeaders: Record<string, string | string[] | undefined>;
  requestBody: string;
  status: number;
  responseHeaders: Record<string, string | string[] | undefined>;
  responseBody: string;
}

// ajv is CommonJS: under NodeNext its class is the default export's `default`.
const Ajv = AjvModule.default;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE_TIME_RE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i;

type Json = Record<string, unknown>;

/** Refs point into one added schema; objects the spec gives properties admit no others (no invented fields). */
function tighten(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tighten);
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    out[k] = k === '$ref' && typeof v === 'string' ? v.replace('#/components/schemas/', 'rivet#/definitions/') : tighten(v);
  }
  if (out.type === 'object' && out.properties !== undefined && out.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}

function pointerGet(value: unknown, pointer: string): unknown {
  let v = value;
  for (const part of pointer.split('/').slice(1)) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Json)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return v;
}

const headerOf = (headers: Exchange['requestHeaders'], name: string): string | undefined => {
  const v = headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
};

const describeErrors = (errors: ErrorObject[] | null | undefined): string[] =>
  (errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message}${e.keyword === 'additionalProperties' ? `: ${String(e.params.additionalProperty)}` : ''}`);

export class Spec {
  readonly operations: Operation[];
  /** Deviations some check has needed so far. */
  readonly used = new Set<Deviation>();
  private readonly ajv: InstanceType<typeof Ajv>;

  /** `ids`: the operations to read (default: every one the emulator serves to the CLI and to servers). */
  constructor(file = SPEC_FILE, ids: readonly string[] = OPERATIONS) {
    // The spec reuses one security block through many YAML aliases.
    const doc = parse(fs.readFileSync(file, 'utf8'), { maxAliasCount: -1 }) as Json;
    this.ajv = new Ajv({ strict: false, allErrors: true });
    this.ajv.addFormat('uuid', UUID_RE);
    this.ajv.addFormat('date-time', { type: 'string', validate: (s: string) => DATE_TIME_RE.test(s) && !Number.isNaN(Date.parse(s)) });
    this.ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
    this.ajv.addFormat('double', { type: 'number', validate: (n: number) => Number.isFinite(n) });
    const components = (doc.components as Json).schemas as Json;
    this.ajv.addSchema({ $id: 'rivet', definitions: tighten(components) as Json });

    const paths = doc.paths as Record<string, Record<string, Json>>;
    this.operations = [];
    for (const [template, item] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (!ids.includes(op.operationId as string)) continue;
        const params = ((op.parameters ?? []) as Json[]).filter((p) => p.in === 'path');
        const responses = new Map<number, ValidateFunction | null>();
        for (const [status, r] of Object.entries(op.responses as Record<string, Json>)) {
          const schema = ((r.content as Json | undefined)?.['application/json'] as Json | undefined)?.schema;
          responses.set(Number(status), schema === undefined ? null : this.ajv.compile(tighten(schema) as Json));
        }
        const requestSchema = (((op.requestBody as Json | undefined)?.content as Json | undefined)?.['application/json'] as Json | undefined)
          ?.schema;
        this.operations.push({
          id: op.operationId as string,
          method: method.toUpperCase(),
          template,
          pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '([^/]+)')}$`),
          pathParams: params.map((p) => ({ name: p.name as string, validate: this.ajv.compile(tighten(p.schema) as Json) })),
          responses,
          request: requestSchema === undefined ? undefined : this.ajv.compile(tighten(requestSchema) as Json),
          needsToken: op.operationId !== 'matchmaker_lobbies_create',
        });
      }
    }
  }

  /** The operation a request is for, or undefined (presigned URLs, admin routes). */
  find(method: string, url: string): Operation | undefined {
    const pathname = url.split('?')[0]!;
    return this.operations.find((o) => o.method === method && o.pattern.test(pathname));
  }

  operation(id: string): Operation {
    const op = this.operations.find((o) => o.id === id);
    if (!op) throw new Error(`operation ${id} is not in the spec`);
    return op;
  }

  private deviation<K extends Deviation['kind']>(kind: K, op: Operation, test: (d: Extract<Deviation, { kind: K }>) => boolean) {
    const found = DEVIATIONS.find((d): d is Extract<Deviation, { kind: K }> => d.kind === kind && (d.operation === op.id || d.operation === '*') && test(d as Extract<Deviation, { kind: K }>));
    if (found) this.used.add(found);
    return found;
  }

  /** Problems with an answer; empty when the spec (with the listed deviations) allows it. */
  checkResponse(op: Operation, x: Pick<Exchange, 'status' | 'responseHeaders' | 'responseBody'>): string[] {
    const problems: string[] = [];
    if (!headerOf(x.responseHeaders, 'rvt-ray-id')) problems.push('no rvt-ray-id header');
    let validate = op.responses.get(x.status);
    if (validate === undefined) {
      const dev = this.deviation('status', op, (d) => d.status === x.status);
      if (!dev) return [...problems, `${op.id} answered ${x.status}, a status the spec does not list`];
      if (dev.body !== undefined) {
        if (!isDeepStrictEqual(safeJson(x.responseBody), dev.body)) problems.push(`${x.status} body ${x.responseBody} is not ${JSON.stringify(dev.body)}`);
        return problems;
      }
      validate = op.responses.get(dev.specStatus);
      if (validate === undefined) return [...problems, `deviation names status ${dev.specStatus}, which the spec does not list for ${op.id}`];
    }
    this.deviation('kinder', op, (d) => d.status === x.status);
    if (validate === null) {
      if (x.responseBody !== '') problems.push(`the spec declares no body for ${x.status}, got ${x.responseBody}`);
      return problems;
    }
    if (!/^application\/json/.test(headerOf(x.responseHeaders, 'content-type') ?? '')) problems.push('the body is not application/json');
    const body = safeJson(x.responseBody);
    if (validate(body)) return problems;
    const remaining = (validate.errors ?? []).filter((e) => {
      const dev = this.deviation('null-field', op, (d) => d.status === x.status && d.pointer === e.instancePath && pointerGet(body, e.instancePath) === null);
      return dev === undefined;
    });
    return [...problems, ...describeErrors(remaining)];
  }

  /** Problems with a request a client sent; empty when the spec (with the listed deviations) allows it. */
  checkRequest(op: Operation, x: Pick<Exchange, 'method' | 'url' | 'requestHeaders' | 'requestBody'>): string[] {
    const problems: string[] = [];
    const match = op.pattern.exec(x.url.split('?')[0]!)!;
    op.pathParams.forEach((p, i) => {
      const value = decodeURIComponent(match[i + 1]!);
      if (!p.validate(value)) problems.push(`path parameter ${p.name} "${value}": ${describeErrors(p.validate.errors).join('; ')}`);
    });
    const auth = headerOf(x.requestHeaders, 'authorization');
    if (auth !== undefined ? !/^Bearer \S+$/.test(auth) : op.needsToken) problems.push(`Authorization is ${auth ?? 'missing'}, not "Bearer <token>"`);
    if (x.method === 'POST') {
      if (headerOf(x.requestHeaders, 'content-length') === undefined) problems.push('a POST without Content-Length');
      if (headerOf(x.requestHeaders, 'transfer-encoding') !== undefined) problems.push('a chunked POST body');
    }
    if (op.request === undefined) {
      if (x.requestBody === '') return problems;
      const dev = this.deviation('request-body', op, (d) => isDeepStrictEqual(safeJson(x.requestBody), d.body));
      if (!dev) problems.push(`the spec declares no request body for ${op.id}, got ${x.requestBody}`);
      return problems;
    }
    if (!/^application\/json/.test(headerOf(x.requestHeaders, 'content-type') ?? '')) problems.push('the body is not sent as application/json');
    if (!op.request(safeJson(x.requestBody))) problems.push(...describeErrors(op.request.errors));
    return problems;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { unparseable: text };
  }
}
