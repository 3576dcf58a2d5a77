// The few calls of the Docker Engine API the container runner makes, over undici (the project's one HTTP client):
// the API is plain HTTP on the daemon's socket (a unix socket, a Windows named pipe) or on tcp://. The daemon is
// found as the docker CLI finds it: DOCKER_HOST, else the context DOCKER_CONTEXT names or the CLI's config file
// sets as current (Docker Desktop's desktop-linux, Colima, OrbStack, Rancher Desktop: each a socket of its own),
// else the platform's default socket, else a rootless daemon's socket where testcontainers looks for one. No docker
// CLI, and no client library (dockerode pulls ssh2 and cpu-features, which node-gyp compiles at every install).
// Every call has a timeout but the waits (a container's exit, an image's load): a daemon that stops answering is
// one line, never a lobby hung on it.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
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
/**
 * The oldest API the emulator speaks: Docker 20.10's, the first with `host-gateway` and the `next-exit` and
 * `not-running` waits the runner asks for. An older daemon is refused in one line naming it.
 */
export const MIN_API_VERSION = '1.41';
/** How long a call other than a wait may take, headers and body each, unless the engine is told otherwise. */
export const ENGINE_TIMEOUT_MS = 30_000;

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
 * file's currentContext), else the platform's default socket where there is one, else a rootless daemon's
 * (rootlessSockets); an Error in one line for what it refuses.
 */
export function engineAddress(env: Record<string, string | undefined> = process.env, defaultSocket = DEFAULT_SOCKET): EngineAddress {
  const host = env.DOCKER_HOST?.trim() ?? '';
  if (host !== '') return hostAddress(host, `DOCKER_HOST "${host}"`, { tls: (env.DOCKER_TLS_VERIFY ?? '') !== '', certDir: env.DOCKER_CERT_PATH || join(homedir(), '.docker') });
  const context = contextEndpoint(env);
  if (context !== undefined) {
    const named = `Docker context "${context.name}"`;
    const address = hostAddress(context.host, `${named}'s host "${context.host}"`, { tls: context.certDir !== undefined, certDir: context.certDir });
    return { ...address, where: `${context.host} (${named})` };
  }
  const socket = process.platform === 'win32' || existsSync(defaultSocket) ? defaultSocket : (rootlessSockets(env).find((p) => existsSync(p)) ?? defaultSocket);
  return { where: socket, socketPath: socket, origin: 'http://localhost', basePath: '' };
}

/**
 * Where a rootless daemon (or Docker Desktop on Linux without its context set) listens, in the order testcontainers
 * tries them once the default socket is not there: $XDG_RUNTIME_DIR/docker.sock, ~/.docker/run/docker.sock,
 * /run/user/<uid>/docker.sock.
 */
export function rootlessSockets(env: Record<string, string | undefined>, uid = process.getuid?.() ?? userInfo().uid): string[] {
  const runtime = env.XDG_RUNTIME_DIR?.trim();
  return [...new Set([...(runtime ? [join(runtime, 'docker.sock')] : []), join(homedir(), '.docker', 'run', 'docker.sock'), `/run/user/${uid}/docker.sock`])];
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
    CapDrop?: string[];
    CapAdd?: string[];
    SecurityOpt?: string[];
    ReadonlyRootfs?: boolean;
    Tmpfs?: Record<string, string>;
    PidsLimit?: number;
    /** Bytes: the hard limit. */
    Memory?: number;
    /** Bytes: memory and swap together; equal to Memory, no swap. */
    MemorySwap?: number;
    /** Bytes: the soft limit the kernel reclaims down to under pressure. */
    MemoryReservation?: number;
    CpuShares?: number;
  };
}

/** A container as inspect answers it (the fields used here). */
export interface ContainerInspect {
  Id: string;
  State: { Status: string; Running: boolean; ExitCode: number };
  Config?: { User?: string };
  HostConfig: ContainerConfig['HostConfig'] & { NetworkMode?: string; Privileged?: boolean };
}

/** An image as inspect answers it (the fields used here). */
export interface ImageInspect {
  Id: string;
  RepoTags?: string[] | null;
  /** Bytes: the image's layers unpacked, about the size of its `docker save` tar. */
  Size: number;
}

/** A network as inspect answers it (the fields used here). */
export interface NetworkInspect {
  Id: string;
  Name: string;
  Driver?: string;
  Options?: Record<string, string>;
  Labels?: Record<string, string>;
  IPAM?: { Config?: { Subnet?: string; Gateway?: string }[] | null };
}

type Query = Record<string, string | number | boolean | undefined>;

export interface EngineOptions {
  /** How long a call other than a wait may take (its headers, then each pause of its body); default ENGINE_TIMEOUT_MS. */
  timeoutMs?: number;
}

/** Whether an error is the daemon not answering in time (undici's headers or body timeout). */
export function isTimeout(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT';
}

/** Whether API version a is older than b (both `1.NN`). */
function olderApi(a: string, b: string): boolean {
  const [am, an] = a.split('.').map(Number) as [number, number];
  const [bm, bn] = b.split('.').map(Number) as [number, number];
  return am < bm || (am === bm && an < bn);
}

/** A Docker daemon, over one undici Agent; `connect` first, which learns the API version it speaks. */
export class DockerEngine {
  readonly where: string;
  readonly timeoutMs: number;
  private readonly agent: Agent;
  private version = MIN_API_VERSION;

  constructor(
    private readonly address: EngineAddress,
    opts: EngineOptions = {},
  ) {
    this.where = address.where;
    this.timeoutMs = opts.timeoutMs ?? ENGINE_TIMEOUT_MS;
    const certs = address.certDir;
    const read = (name: string) => readFileSync(join(certs!, name));
    const connect = address.socketPath !== undefined ? { socketPath: address.socketPath } : certs ? { ca: read('ca.pem'), cert: read('cert.pem'), key: read('key.pem') } : {};
    this.agent = new (undici().Agent)({ connect: { ...connect, timeout: this.timeoutMs } });
  }

  /**
   * Pings the daemon (unversioned, as the CLI does) and takes the API version it answers with; a daemon older than
   * MIN_API_VERSION is refused (EngineError 0) with one line naming both.
   */
  async connect(): Promise<this> {
    const res = await undici().request.call(this.agent, {
      origin: this.address.origin,
      path: `${this.address.basePath}/_ping`,
      method: 'GET',
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    });
    await res.body.text();
    if (res.statusCode !== 200) throw new EngineError(res.statusCode, `it answers ${res.statusCode} to a ping`);
    const version = res.headers['api-version'];
    if (typeof version === 'string' && /^1\.\d+$/.test(version)) {
      if (olderApi(version, MIN_API_VERSION))
        throw new EngineError(0, `the Docker daemon at ${this.where} speaks API ${version}; --run-build needs API ${MIN_API_VERSION} (Docker 20.10) or newer`);
      this.version = version;
    }
    return this;
  }

  /** The API version in use (the daemon's). */
  get apiVersion(): string {
    return this.version;
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

  /**
   * One call. `wait`: no timeout (a wait lasts as long as the container, a load as long as the image takes);
   * `extraMs`: more time than the others get (a stop waits for its grace period first).
   */
  private async call(
    method: Dispatcher.HttpMethod,
    path: string,
    opts: { query?: Query; json?: unknown; body?: Readable; type?: string; wait?: boolean; extraMs?: number; signal?: AbortSignal } = {},
  ): Promise<Dispatcher.ResponseData> {
    const timeout = opts.wait ? 0 : this.timeoutMs + (opts.extraMs ?? 0);
    let res: Dispatcher.ResponseData;
    try {
      res = await undici().request.call(this.agent, {
        origin: this.address.origin,
        path: this.path(path, opts.query),
        method,
        headers: opts.json !== undefined ? { 'content-type': 'application/json' } : opts.type ? { 'content-type': opts.type } : {},
        body: opts.json !== undefined ? JSON.stringify(opts.json) : opts.body,
        headersTimeout: timeout,
        bodyTimeout: timeout,
        signal: opts.signal,
      });
    } catch (err) {
      throw this.timedOut(err, method, path, timeout);
    }
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

  /** A timeout said in one line (the call and how long), anything else as it is. */
  private timedOut(err: unknown, method: string, path: string, timeout: number): unknown {
    if (!isTimeout(err)) return err;
    const e = new Error(`the Docker daemon at ${this.where} did not answer ${method} ${path.replace(/\?.*$/, '')} within ${Math.round(timeout / 1000)} s`);
    (e as NodeJS.ErrnoException).code = (err as NodeJS.ErrnoException).code;
    return e;
  }

  private async json<T>(method: Dispatcher.HttpMethod, path: string, opts?: Parameters<DockerEngine['call']>[2]): Promise<T> {
    const res = await this.call(method, path, opts);
    let text: string;
    try {
      text = await res.body.text();
    } catch (err) {
      throw this.timedOut(err, method, path, opts?.wait ? 0 : this.timeoutMs);
    }
    return (text ? JSON.parse(text) : undefined) as T;
  }

  private async empty(method: Dispatcher.HttpMethod, path: string, query?: Query, extraMs?: number): Promise<void> {
    await (await this.call(method, path, { query, extraMs })).body.dump();
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

  /** `docker image inspect` (the fields used here), or undefined when there is no such image. */
  async inspectImage(name: string): Promise<ImageInspect | undefined> {
    try {
      return await this.json<ImageInspect>('GET', `/images/${encodeURIComponent(name)}/json`);
    } catch (err) {
      if (err instanceof EngineError && err.status === 404) return undefined;
      throw err;
    }
  }

  /**
   * `docker save`: the image as a docker-archive tar (manifest.json, its config, its layers), streamed as the daemon
   * writes it. No timeout (the daemon may take a while over a large layer); `signal` stops it.
   */
  async exportImage(name: string, signal?: AbortSignal): Promise<Readable> {
    return (await this.call('GET', `/images/${encodeURIComponent(name)}/get`, { wait: true, signal })).body;
  }

  /**
   * `docker build` with the legacy builder (no BuildKit session, so it needs nothing but the daemon): `context` a tar
   * of the build context, streamed as the body. Each `stream` text of the progress goes to `onText`; an `error` line
   * is thrown (EngineError 200), as is a refusal before the build starts (a Dockerfile that does not parse: 400).
   * Answers the image ID (the `aux` line the daemon sends once the image is made).
   */
  async buildImage(
    context: Readable,
    opts: { tag?: string; dockerfile?: string; buildArgs?: Record<string, string>; signal?: AbortSignal },
    onText: (text: string) => void = () => {},
  ): Promise<string> {
    const query = { t: opts.tag, dockerfile: opts.dockerfile, buildargs: JSON.stringify(opts.buildArgs ?? {}), rm: 1, forcerm: 1, version: '1' };
    const res = await this.call('POST', '/build', { query, body: context, type: 'application/x-tar', wait: true, signal: opts.signal });
    let id: string | undefined;
    for await (const line of createInterface({ input: res.body, crlfDelay: Infinity })) {
      if (line.trim() === '') continue;
      const message = JSON.parse(line) as { stream?: string; error?: string; errorDetail?: { message?: string }; aux?: { ID?: string } };
      if (message.error !== undefined || message.errorDetail !== undefined) throw new EngineError(200, message.errorDetail?.message ?? message.error ?? 'failed');
      if (message.stream !== undefined) onText(message.stream);
      if (typeof message.aux?.ID === 'string') id = message.aux.ID;
    }
    if (id === undefined) throw new EngineError(200, 'the daemon ended the build without naming the image it made');
    return id;
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

  /** `docker inspect` of a container. */
  inspectContainer(id: string): Promise<ContainerInspect> {
    return this.json('GET', `/containers/${id}/json`);
  }

  /**
   * Resolves with its exit status once it exits: `next-exit` (the default) asked before it starts, as a created
   * container counts as not running; `not-running` answers at once for one that has exited already.
   */
  async waitContainer(id: string, condition: 'next-exit' | 'not-running' = 'next-exit'): Promise<number> {
    return (await this.json<{ StatusCode: number }>('POST', `/containers/${id}/wait`, { query: { condition }, wait: true })).StatusCode;
  }

  killContainer(id: string, signal: string): Promise<void> {
    return this.empty('POST', `/containers/${id}/kill`, { signal });
  }

  /**
   * `docker stop -t`: the daemon sends its stop signal (SIGTERM unless the image names another), and SIGKILL after
   * `seconds`; answers once the container has stopped (the call gets those seconds on top of its timeout).
   */
  stopContainer(id: string, seconds: number): Promise<void> {
    return this.empty('POST', `/containers/${id}/stop`, { t: seconds }, seconds * 1000);
  }

  removeContainer(id: string): Promise<void> {
    return this.empty('DELETE', `/containers/${id}`, { force: true });
  }

  /** The containers carrying every one of these labels (`key=value`), stopped ones too unless `running`. */
  listContainers(labels: string[], opts: { running?: boolean } = {}): Promise<ContainerSummary[]> {
    return this.json('GET', '/containers/json', { query: { all: !opts.running, filters: JSON.stringify({ label: labels }) } });
  }

  /** A network by name or id; undefined when there is none. */
  async inspectNetwork(name: string): Promise<NetworkInspect | undefined> {
    try {
      return await this.json<NetworkInspect>('GET', `/networks/${encodeURIComponent(name)}`);
    } catch (err) {
      if (err instanceof EngineError && err.status === 404) return undefined;
      throw err;
    }
  }

  /** Creates a bridge network; answers its id. */
  async createNetwork(body: { Name: string; Labels?: Record<string, string>; Options?: Record<string, string> }): Promise<string> {
    return (await this.json<{ Id: string }>('POST', '/networks/create', { json: { Driver: 'bridge', CheckDuplicate: true, ...body } })).Id;
  }

  removeNetwork(name: string): Promise<void> {
    return this.empty('DELETE', `/networks/${encodeURIComponent(name)}`);
  }

  /** The networks carrying every one of these labels (`key=value`). */
  listNetworks(labels: string[]): Promise<NetworkInspect[]> {
    return this.json('GET', '/networks', { query: { filters: JSON.stringify({ label: labels }) } });
  }

  /**
   * Attaches to its stdout and stderr (from its first line, and until it ends): the raw stream of multiplexed frames
   * (TTY off) on the upgraded connection, for a FrameDemuxer.
   */
  async attachContainer(id: string): Promise<Readable> {
    // An Agent needs the origin, which undici's type of the upgrade options leaves out.
    const options: Dispatcher.UpgradeOptions & { origin: string; headersTimeout: number } = {
      origin: this.address.origin,
      path: this.path(`/containers/${id}/attach`, { stream: 1, logs: 1, stdout: 1, stderr: 1 }),
      method: 'POST',
      protocol: 'tcp',
      headersTimeout: this.timeoutMs,
    };
    try {
      const { socket } = await undici().upgrade.call(this.agent, options);
      return socket;
    } catch (err) {
      throw this.timedOut(err, 'POST', `/containers/${id}/attach`, this.timeoutMs);
    }
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
