// The process's connections, for every request the CLI makes (API calls, presigned GETs and part PUTs): one undici
// Agent (keep-alive; connect, headers and body timeouts from --timeout), and one undici ProxyAgent per proxy from
// HTTPS_PROXY / HTTP_PROXY, which opens a CONNECT tunnel per connection (credentials from the proxy URL, https
// proxies, bracketed IPv6 targets). The context closes them when the command ends.
//
// Loading: a request without a proxy needs undici's Agent and its request API alone, two of its files (about a
// third of the whole package's load time), and not its HTTP/2 connector; a proxy loads the package. Those paths
// are inside undici, so its version is pinned in package.json, and test/unit/undici-files.test.ts fails when an
// upgrade moves them.
import Module, { createRequire } from 'node:module';
import net from 'node:net';
import v8 from 'node:v8';
import type { Agent as AgentType, buildConnector, Dispatcher, Pool as PoolType, ProxyAgent as ProxyAgentType } from 'undici';
import { UsageError } from '../errors.js';

const require = createRequire(import.meta.url);

/**
 * undici's files that a direct request loads, instead of the whole package; and its HTTP/2 connector, which the
 * client file requires at its top although only a connection whose TLS handshake chose h2 calls it, and which loads
 * node:http2 with node:tls and node:crypto (about a third of undici's load time). The CLI never offers h2
 * (`allowH2` is off), so that file is stood in for by one that loads it on its first call.
 */
export const UNDICI_FILES = {
  agent: 'undici/lib/dispatcher/agent.js',
  request: 'undici/lib/api/api-request.js',
  h2: 'undici/lib/dispatcher/client-h2.js',
} as const;

type Env = Record<string, string | undefined>;
type Connector = buildConnector.connector;
type RequestFn = (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;

let loaded: { Agent: typeof AgentType; request: RequestFn } | undefined;

function undici(): NonNullable<typeof loaded> {
  if (!loaded) {
    // llhttp, undici's parser, is WebAssembly: after the first answer V8 recompiles it with its optimising tier on a
    // background thread, and the process waits for that at exit (about 0.2 CPU-s). The baseline tier alone parses
    // the few headers a command reads as well; bodies are not parsed byte by byte.
    deferH2();
    loaded = { Agent: require(UNDICI_FILES.agent) as typeof AgentType, request: require(UNDICI_FILES.request) as RequestFn };
    // After the loads: a changed flag makes V8 refuse the code cache Node compiles its own modules from.
    v8.setFlagsFromString('--liftoff-only');
  }
  return loaded;
}

/** Puts a stand-in for undici's HTTP/2 connector in the module cache, unless undici is loaded already. */
function deferH2(): void {
  const file = require.resolve(UNDICI_FILES.h2);
  if (require.cache[file]) return;
  const stub = new Module(file);
  stub.filename = file;
  stub.loaded = true;
  let real: ((...a: unknown[]) => unknown) | undefined;
  stub.exports = function connectH2(this: unknown, ...args: unknown[]): unknown {
    if (!real) {
      delete require.cache[file];
      real = require(file) as (...a: unknown[]) => unknown;
    }
    return real.apply(this, args);
  };
  require.cache[file] = stub;
}

/** One request through `dispatcher` (undici's request API, which the two files above do not attach to the Agent). */
export function request(dispatcher: Dispatcher, options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData> {
  return undici().request.call(dispatcher, options);
}

export class Agents {
  private direct: AgentType | undefined;
  private readonly proxied = new Map<string, ProxyAgentType>();

  /** `timeoutMs` (--timeout): the longest wait for a connection, for an answer's headers, and between two pieces of its body. */
  constructor(
    private readonly env: Env,
    private readonly timeoutMs: number,
  ) {}

  /** The dispatcher for `url`: through its proxy, or direct (always for `direct`: the embedded emulator on loopback). */
  for(url: URL, direct = false): Dispatcher {
    const proxy = direct ? undefined : proxyFor(this.env, url);
    if (!proxy) {
      const t = this.timeoutMs;
      this.direct ??= new (undici().Agent)({ connect: { timeout: t }, headersTimeout: t, bodyTimeout: t });
      return this.direct;
    }
    let agent = this.proxied.get(proxy.href);
    if (!agent) {
      agent = proxyAgent(proxy, this.timeoutMs);
      this.proxied.set(proxy.href, agent);
    }
    return agent;
  }

  /** Closes every connection, idle or not, and fails what is still on its way: nothing outlives the command. */
  async close(): Promise<void> {
    const all = [this.direct, ...this.proxied.values()].filter((d) => d !== undefined);
    this.direct = undefined;
    this.proxied.clear();
    await Promise.all(all.map((d) => d.destroy().catch(() => {})));
  }
}

function proxyAgent(proxy: URL, t: number): ProxyAgentType {
  undici();
  const { ProxyAgent, Pool } = require('undici') as typeof import('undici');
  // The tunnel's CONNECT is a request to the proxy: a proxy that does not open it within --timeout, or refuses it,
  // fails as a connection that was never made (so even a call that is not idempotent may be sent again).
  class ProxyPool extends Pool {
    override connect(options: Dispatcher.ConnectOptions): Promise<Dispatcher.ConnectData>;
    override connect(options: Dispatcher.ConnectOptions, callback: (err: Error | null, data: Dispatcher.ConnectData) => void): void;
    override connect(options: Dispatcher.ConnectOptions, callback?: (err: Error | null, data: Dispatcher.ConnectData) => void) {
      if (callback) return super.connect(options, callback);
      return super.connect(options).then(
        (data) => {
          if (data.statusCode === 200) return data;
          data.socket.on('error', () => {}).destroy();
          const auth = data.statusCode === 407 ? (proxy.username ? ': the credentials in the proxy URL were refused' : ': it wants credentials (user:password@ in the proxy URL)') : '';
          const code = data.statusCode === 407 ? 'EPROXYAUTH' : 'EPROXY';
          throw Object.assign(new Error(`the proxy ${proxy.host} answered ${data.statusCode} to CONNECT${auth}`), { code });
        },
        (err: { code?: string }) => {
          if (err?.code !== 'UND_ERR_HEADERS_TIMEOUT') throw err;
          throw Object.assign(new Error(`the proxy ${proxy.host} opened no tunnel in ${t} ms`), { code: 'UND_ERR_CONNECT_TIMEOUT', cause: err });
        },
      );
    }
  }
  return new ProxyAgent({
    uri: proxy.href,
    headersTimeout: t,
    bodyTimeout: t,
    proxyTls: { timeout: t },
    requestTls: { timeout: t },
    clientFactory: (origin, options) => {
      // undici gives an https proxy's address as the TLS server name even when it is an IP, which TLS forbids (Node
      // warns, DEP0123): none then, and the certificate is checked against the address, as for any address.
      const connector = (options as { connect: Connector }).connect;
      const connect: Connector = (o, done) => connector({ ...o, servername: o.servername && net.isIP(o.servername) ? undefined : o.servername }, done);
      return new ProxyPool(origin, { ...options, connect, headersTimeout: t }) as PoolType;
    },
  });
}

/**
 * The proxy for `url` from HTTPS_PROXY / HTTP_PROXY (upper case first, then lower; https falls back to HTTP_PROXY)
 * unless NO_PROXY exempts its host (see noProxy). A proxy URL without a scheme is http://.
 */
export function proxyFor(env: Env, url: URL): URL | undefined {
  const httpName = env.HTTP_PROXY !== undefined ? 'HTTP_PROXY' : 'http_proxy';
  const name = url.protocol === 'https:' ? (env.HTTPS_PROXY !== undefined ? 'HTTPS_PROXY' : env.https_proxy !== undefined ? 'https_proxy' : httpName) : httpName;
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  if (noProxy(env.NO_PROXY ?? env.no_proxy ?? '', url)) return undefined;
  let proxy: URL | undefined;
  try {
    proxy = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`);
  } catch {
    proxy = undefined;
  }
  if (!proxy || (proxy.protocol !== 'http:' && proxy.protocol !== 'https:') || !proxy.hostname) {
    throw new UsageError(`${name} is not an http:// or https:// proxy URL: ${JSON.stringify(raw.replace(/\/\/[^@/]*@/, '//…@'))}`);
  }
  return proxy;
}

/**
 * Whether NO_PROXY exempts `url`, as curl and Go read it: entries split by commas or spaces; `*` exempts all; a name
 * exempts itself and its subdomains (`example.com`, `.example.com`, `*.example.com` alike); an IPv4 or IPv6 address
 * (brackets optional) exempts that address; `addr/bits` a CIDR range; `:port` after any of them limits it to that port.
 */
export function noProxy(list: string, url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase().replace(/\.$/, '');
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const family = net.isIP(host);
  for (const raw of list.toLowerCase().split(/[\s,]+/)) {
    if (!raw) continue;
    if (raw === '*') return true;
    const entry = splitPort(raw);
    if (!entry || (entry.port && entry.port !== port)) continue;
    const cidr = /^(.+)\/(\d{1,3})$/.exec(entry.host);
    if (cidr) {
      const type = net.isIP(cidr[1]!);
      const bits = Number(cidr[2]);
      if (!family || type !== family || bits > (type === 4 ? 32 : 128)) continue;
      const range = new net.BlockList();
      range.addSubnet(cidr[1]!, bits, type === 4 ? 'ipv4' : 'ipv6');
      if (range.check(host, family === 4 ? 'ipv4' : 'ipv6')) return true;
      continue;
    }
    const type = net.isIP(entry.host);
    if (type) {
      // Addresses compare as addresses: `::1` and `0:0::1` are one.
      if (family === type) {
        const one = new net.BlockList();
        one.addAddress(entry.host, type === 4 ? 'ipv4' : 'ipv6');
        if (one.check(host, family === 4 ? 'ipv4' : 'ipv6')) return true;
      }
      continue;
    }
    const name = entry.host.replace(/^\*?\./, '').replace(/\.$/, '');
    if (name && !family && (host === name || host.endsWith(`.${name}`))) return true;
  }
  return false;
}

/** `host`, `host:port`, `[v6]`, `[v6]:port`, or a bare IPv6 address (whose colons are not a port). */
function splitPort(entry: string): { host: string; port?: string } | undefined {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return { host: bracketed[1]!, port: bracketed[2] };
  if (entry.indexOf(':') !== entry.lastIndexOf(':')) return { host: entry };
  const m = /^([^:]+)(?::(\d+))?$/.exec(entry);
  return m ? { host: m[1]!, port: m[2] } : undefined;
}
