// The few calls of the Docker Engine API the container runner makes, over undici (the project's one HTTP client):
// the API is plain HTTP on the daemon's socket (a unix socket, a Windows named pipe) or on tcp://. The daemon is
// found as the docker CLI finds it: DOCKER_HOST, else the context DOCKER_CONTEXT names or the CLI's config file
// sets as current (Docker Desktop's desktop-linux, Colima, OrbStack, Rancher Desktop: each a socket of its own),
// else the platform's default socket. No docker CLI, and no client
// library (dockerode pulls ssh2 and cpu-features, which node-gyp compiles at every install).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { createRequire } from 'node:module';
import type { Agent, Dispatcher } from 'undici';

// undici's files, not its package entry: the entry makes its Agent Node's global dispatcher, which every fetch()
// of the process (a test's, a user's) would then go through. The same files src/api/agents.ts loads.
const require = createRequire(import.meta.url);
const undici = () => ({
  Agent: require('undici/lib/dispatcher/agent.js') as typeof Agent,
  request: require('undici/lib/api/api-request.js') as (this: Dispatcher, o: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>,
  upgrade: require('undici/lib/api/api-upgrade.js') as (this: Dispatcher, o: Dispatcher.UpgradeOptions) => Promise<Dispatcher.UpgradeData>,
});

export const DEFAULT_SOCKET = process.platform === 'win32' ? '//./pipe/docker_engine' : '/var/run/docker.sock';
/** The API version asked for when the daemon names none: Docker 20.10, the first with `host-gateway`. */
const MIN_API_VERSION = '1.41';

/** Where the daemon is: a socket (unix or named pipe) or an HTTP origin, and how to name it in messages. */
export interface EngineAddress {
  /** DOCKER_HOST as given, or the default socket. */
  where: string;
  socketPath?: string;
  /** http://localhost for a socket (any name does: the daemon reads no Host), else the daemon's http(s) origin. */
  origin: string;
  /** A path prefix before /v1.xx (tcp://host:2375/prefix, as the docker CLI allows). */
  basePath: string;
  /** TLS (DOCKER_TLS_VERIFY, or https://): the directory of ca.pem, cert.pem and key.pem. */
  certDir?: string;
}

/**
 * Where the docker CLI would reach its daemon: DOCKER_HOST, else the context in use (DOCKER_CONTEXT, else the config
 * file's currentContext), else the platform's default socket; an Error in one line for what it refuses.
 */
export function engineAddress(env: Record<string, string | undefined> = process.env): EngineAddress {
  const host = env.DOCKER_HOST?.trim() ?? '';
  if (host !== '') return hostAddress(host, `DOCKER_HOST "${host}"`, { tls: (env.DOCKER_TLS_VERIFY ?? '') !== '', certDir: env.DOCKER_CERT_PATH || join(homedir(), '.docker') });
  const context = contextEndpoint(env);
  if (context !== undefined) {
    const named = `Docker context "${context.name}"`;
    const address = hostAddress(context.host, `${named}'s host "${context.host}"`, { tls: context.certDir !== undefined, certDir: context.certDir });
    return { ...address, where: `${context.host} (${named})` };
  }
  return { where: DEFAULT_SOCKET, socketPath: DEFAULT_SOCKET, origin: 'http://localhost', basePath: '' };
}

/** The docker CLI's own directory: DOCKER_CONFIG, else ~/.docker. */
function dockerConfigDir(env: Record<string, string | undefined>): string {
  return env.DOCKER_CONFIG?.trim() || join(homedir(), '.docker');
}

/**
 * The context the docker CLI would use when DOCKER_HOST is not set: DOCKER_CONTEXT, else `currentContext` in its
 * config.json; undefined for none, or `default` (the platform's socket). Its daemon's host, and the directory of
 * its TLS files (ca.pem, cert.pem, key.pem) where it has them. A context named that does not exist, or files the
 * CLI could not read either, are refused in one line, as the CLI refuses them.
 */
function contextEndpoint(env: Record<string, string | undefined>): { name: string; host: string; certDir?: string } | undefined {
  const dir = dockerConfigDir(env);
  let name = env.DOCKER_CONTEXT?.trim() ?? '';
  const source = name !== '' ? 'DOCKER_CONTEXT' : join(dir, 'config.json');
  if (name === '') {
    let config: unknown;
    try {
      config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new Error(`the docker CLI's config ${join(dir, 'config.json')} cannot be read: ${(err as Error).message}`);
    }
    const current = (config as { currentContext?: unknown } | null)?.currentContext;
    name = typeof current === 'string' ? current.trim() : '';
  }
  if (name === '' || name === 'default') return undefined;
  // The CLI keeps a context under the SHA-256 of its name.
  const id = createHash('sha256').update(name).digest('hex');
  const metaFile = join(dir, 'contexts', 'meta', id, 'meta.json');
  let meta: unknown;
  try {
    meta = JSON.parse(readFileSync(metaFile, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`Docker context "${name}" (from ${source}) does not exist: \`docker context ls\` lists those there are`);
    throw new Error(`Docker context "${name}" cannot be read (${metaFile}): ${(err as Error).message}`);
  }
  const host = (meta as { Endpoints?: { docker?: { Host?: unknown } } } | null)?.Endpoints?.docker?.Host;
  if (typeof host !== 'string' || host.trim() === '') throw new Error(`Docker context "${name}" names no Docker endpoint (${metaFile})`);
  const tlsDir = join(dir, 'contexts', 'tls', id, 'docker');
  return { name, host: host.trim(), certDir: existsSync(join(tlsDir, 'ca.pem')) || existsSync(join(tlsDir, 'cert.pem')) ? tlsDir : undefined };
}

/** A daemon's host (DOCKER_HOST's or a context's), `named` so in what it refuses; TLS as its source says. */
function hostAddress(host: string, named: string, tls: { tls: boolean; certDir?: string }): EngineAddress {
  // A bare host:port is tcp, as the CLI takes it.
  const at = host.indexOf('://');
  const scheme = at === -1 ? 'tcp' : host.slice(0, at).toLowerCase();
  const rest = at === -1 ? host : host.slice(at + 3);
  switch (scheme) {
    case 'unix':
    case 'npipe':
      return { where: host, socketPath: rest || DEFAULT_SOCKET, origin: 'http://localhost', basePath: '' };
    case 'tcp':
    case 'http':
    case 'https': {
      const secure = scheme === 'https' || tls.tls;
      let url: URL;
      try {
        // A non-special scheme keeps any port as written (http: would drop :80); an empty host is localhost.
        url = new URL(`tcp://${rest.startsWith(':') ? `localhost${rest}` : rest}`);
      } catch {
        throw new Error(`${named} is not an address such as tcp://127.0.0.1:2375 or unix:///var/run/docker.sock`);
      }
      if (url.hostname === '' || url.search !== '' || url.hash !== '' || url.username !== '')
        throw new Error(`${named} is not an address such as tcp://127.0.0.1:2375 or unix:///var/run/docker.sock`);
      const port = url.port || (secure ? '2376' : '2375');
      return {
        where: host,
        origin: `${secure ? 'https' : 'http'}://${url.hostname}:${port}`,
        basePath: url.pathname.replace(/\/+$/, ''),
        certDir: secure ? tls.certDir : undefined,
      };
    }
    case 'ssh':
      throw new Error(`${named}: ssh:// is not supported here; forward the daemon's socket instead (ssh -NL /tmp/docker.sock:/var/run/docker.sock ${rest}) and set DOCKER_HOST=unix:///tmp/docker.sock`);
    default:
      throw new Error(`${named}: ${scheme}:// is not supported here; use unix://, npipe:// or tcp://`);
  }
}

/** An answer of the daemon that is not a success: its status and its own message. */
export class EngineError extends Error {
  override name = 'EngineError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The daemon as `/info` answers (the fields used here). */
export interface DaemonInfo {
  /** "Debian GNU/Linux 12 (bookworm)", "Docker Desktop", "Ubuntu 24.04 LTS"… */
  OperatingSystem?: string;
}

/** A container as the list call answers it (the fields used here). */
export interface ContainerSummary {
  Id: string;
  /** The image as the container was created from it (its name, as given). */
  Image?: string;
  Labels: Record<string, string>;
  State?: string;
}

/** A one-shot stats answer (the fields used here; cgroup v1 and v2 differ in memory_stats.stats). */
export interface ContainerStats {
  cpu_stats: { cpu_usage: { total_usage: number; percpu_usage?: number[] }; system_cpu_usage?: number; online_cpus?: number };
  precpu_stats: { cpu_usage?: { total_usage: number }; system_cpu_usage?: number };
  memory_stats: { usage?: number; stats?: Record<string, number | undefined> };
}

/** The body of a container create (the fields used here, as the API names them). */
export interface ContainerConfig {
  Image: string;
  Env?: string[];
  Labels?: Record<string, string>;
  ExposedPorts?: Record<string, object>;
  HostConfig?: {
    Init?: boolean;
    NetworkMode?: string;
    PortBindings?: Record<string, { HostIp: string; HostPort: string }[]>;
    ExtraHosts?: string[];
  };
}

type Query = Record<string, string | number | boolean | undefined>;

/** A Docker daemon, over one undici Agent; `connect` first, which learns the API version it speaks. */
export class DockerEngine {
  readonly where: string;
  private readonly agent: Agent;
  private version = MIN_API_VERSION;

  constructor(private readonly address: EngineAddress) {
    this.where = address.where;
    const certs = address.certDir;
    const read = (name: string) => readFileSync(join(certs!, name));
    this.agent = new (undici().Agent)({
      connect: address.socketPath !== undefined ? { socketPath: address.socketPath } : certs ? { ca: read('ca.pem'), cert: read('cert.pem'), key: read('key.pem') } : {},
    });
  }

  /** Pings the daemon (unversioned, as the CLI does) and takes the API version it answers with. */
  async connect(): Promise<this> {
    const res = await undici().request.call(this.agent, { origin: this.address.origin, path: `${this.address.basePath}/_ping`, method: 'GET' });
    await res.body.text();
    if (res.statusCode !== 200) throw new EngineError(res.statusCode, `it answers ${res.statusCode} to a ping`);
    const version = res.headers['api-version'];
    if (typeof version === 'string' && /^1\.\d+$/.test(version)) this.version = version;
    return this;
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  private path(path: string, query: Query = {}): string {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) q.set(k, String(v));
    const qs = q.toString();
    return `${this.address.basePath}/v${this.version}${path}${qs ? `?${qs}` : ''}`;
  }

  private async call(method: Dispatcher.HttpMethod, path: string, opts: { query?: Query; json?: unknown; body?: Readable; type?: string; wait?: boolean } = {}): Promise<Dispatcher.ResponseData> {
    const res = await undici().request.call(this.agent, {
      origin: this.address.origin,
      path: this.path(path, opts.query),
      method,
      headers: opts.json !== undefined ? { 'content-type': 'application/json' } : opts.type ? { 'content-type': opts.type } : {},
      body: opts.json !== undefined ? JSON.stringify(opts.json) : opts.body,
      // A wait lasts as long as the container, a load as long as the image takes: no timeout of undici's own.
      ...(opts.wait ? { headersTimeout: 0, bodyTimeout: 0 } : {}),
    });
    if (res.statusCode >= 300) {
      const text = await res.body.text().catch(() => '');
      let message = text.trim();
      try {
        message = (JSON.parse(text) as { message?: string }).message ?? message;
      } catch {
        // Not JSON: the text as it came.
      }
      throw new EngineError(res.statusCode, message || `the daemon answered ${res.statusCode}`);
    }
    return res;
  }

  private async json<T>(method: Dispatcher.HttpMethod, path: string, opts?: Parameters<DockerEngine['call']>[2]): Promise<T> {
    const res = await this.call(method, path, opts);
    const text = await res.body.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  private async empty(method: Dispatcher.HttpMethod, path: string, query?: Query): Promise<void> {
    await (await this.call(method, path, { query })).body.dump();
  }

  /** `docker info`: what the daemon is (the fields used here). */
  async info(): Promise<DaemonInfo> {
    return this.json<DaemonInfo>('GET', '/info');
  }

  /**
   * `docker load`: the tar streamed as the body; answers the `stream` texts of the progress lines ("Loaded image:
   * ..."), and throws the daemon's message on an `error` line.
   */
  async loadImage(tar: Readable): Promise<string[]> {
    const res = await this.call('POST', '/images/load', { query: { quiet: 1 }, body: tar, type: 'application/x-tar', wait: true });
    const texts: string[] = [];
    for await (const line of createInterface({ input: res.body, crlfDelay: Infinity })) {
      if (line.trim() === '') continue;
      const message = JSON.parse(line) as { stream?: string; error?: string; errorDetail?: { message?: string } };
      if (message.error !== undefined || message.errorDetail !== undefined) throw new EngineError(200, message.error ?? message.errorDetail?.message ?? 'failed');
      if (message.stream !== undefined) texts.push(message.stream);
    }
    return texts;
  }

  /** Whether the image is there. */
  async hasImage(name: string): Promise<boolean> {
    try {
      await this.json('GET', `/images/${encodeURIComponent(name)}/json`);
      return true;
    } catch (err) {
      if (err instanceof EngineError && err.status === 404) return false;
      throw err;
    }
  }

  /** The names an image has (none for one loaded by ID and never tagged), or undefined when there is no such image. */
  async imageTags(name: string): Promise<string[] | undefined> {
    try {
      return (await this.json<{ RepoTags?: string[] | null }>('GET', `/images/${encodeURIComponent(name)}/json`)).RepoTags ?? [];
    } catch (err) {
      if (err instanceof EngineError && err.status === 404) return undefined;
      throw err;
    }
  }

  /** `docker rmi`; unforced, a 409 when a container uses it (or several names hold it). */
  removeImage(name: string, opts: { force?: boolean } = {}): Promise<void> {
    return this.empty('DELETE', `/images/${encodeURIComponent(name)}`, { force: opts.force ?? true });
  }

  /** Creates a container; answers its id. */
  async createContainer(config: ContainerConfig): Promise<string> {
    return (await this.json<{ Id: string }>('POST', '/containers/create', { json: config })).Id;
  }

  startContainer(id: string): Promise<void> {
    return this.empty('POST', `/containers/${id}/start`);
  }

  /** Resolves with its exit status once it next exits (asked before it starts: a created container is not running). */
  async waitContainer(id: string): Promise<number> {
    return (await this.json<{ StatusCode: number }>('POST', `/containers/${id}/wait`, { query: { condition: 'next-exit' }, wait: true })).StatusCode;
  }

  killContainer(id: string, signal: string): Promise<void> {
    return this.empty('POST', `/containers/${id}/kill`, { signal });
  }

  removeContainer(id: string): Promise<void> {
    return this.empty('DELETE', `/containers/${id}`, { force: true });
  }

  /** The containers carrying every one of these labels (`key=value`), stopped ones too unless `running`. */
  listContainers(labels: string[], opts: { running?: boolean } = {}): Promise<ContainerSummary[]> {
    return this.json('GET', '/containers/json', { query: { all: !opts.running, filters: JSON.stringify({ label: labels }) } });
  }

  /**
   * Attaches to its stdout and stderr (from its first line, and until it ends): the raw stream of multiplexed frames
   * (TTY off) on the upgraded connection, for a FrameDemuxer.
   */
  async attachContainer(id: string): Promise<Readable> {
    // An Agent needs the origin, which undici's type of the upgrade options leaves out.
    const options: Dispatcher.UpgradeOptions & { origin: string } = {
      origin: this.address.origin,
      path: this.path(`/containers/${id}/attach`, { stream: 1, logs: 1, stdout: 1, stderr: 1 }),
      method: 'POST',
      protocol: 'tcp',
    };
    const { socket } = await undici().upgrade.call(this.agent, options);
    return socket;
  }

  /** One stats sample (the daemon takes two, a second apart, so that precpu_stats is filled). */
  statsOf(id: string): Promise<ContainerStats> {
    return this.json('GET', `/containers/${id}/stats`, { query: { stream: false } });
  }
}

export type FrameStream = 'stdout' | 'stderr';

/**
 * Splits the multiplexed stream of an attach (TTY off) into its streams: each frame is an 8-byte header (the
 * stream: 0 stdin, 1 stdout, 2 stderr, 3 the daemon's own error; three zero bytes; the payload's length, big-endian
 * 32 bits) and the payload. Headers and payloads may be cut anywhere between chunks; a payload is passed on in the
 * pieces it arrives in, so memory stays a header's worth whatever a frame's length.
 */
export class FrameDemuxer {
  private header = Buffer.alloc(8);
  private headerBytes = 0;
  private remaining = 0;
  private stream: FrameStream = 'stdout';

  constructor(private readonly emit: (stream: FrameStream, payload: Buffer) => void) {}

  push(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.remaining === 0) {
        const take = Math.min(8 - this.headerBytes, chunk.length - at);
        chunk.copy(this.header, this.headerBytes, at, at + take);
        this.headerBytes += take;
        at += take;
        if (this.headerBytes < 8) return;
        this.headerBytes = 0;
        this.stream = this.header[0] === 2 || this.header[0] === 3 ? 'stderr' : 'stdout';
        this.remaining = this.header.readUInt32BE(4);
        continue;
      }
      const take = Math.min(this.remaining, chunk.length - at);
      this.emit(this.stream, chunk.subarray(at, at + take));
      this.remaining -= take;
      at += take;
    }
  }
}
