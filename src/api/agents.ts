// The process's keep-alive connections, for every request the CLI makes (API calls, presigned GETs and part PUTs):
// one node:http(s) agent per scheme and proxy, each proxied connection a CONNECT tunnel through its proxy, all of
// them closed by close(). node:http is the one HTTP stack: it loads with the process, and its send path is the
// cheapest there is for the part uploads.
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';

/**
 * The proxy for `url` from HTTPS_PROXY / HTTP_PROXY (or lower case; https falls back to HTTP_PROXY) unless NO_PROXY
 * names its host (a name, a domain with or without its leading dot, an optional port, or `*`).
 */
export function proxyFor(env: Record<string, string | undefined>, url: URL): URL | undefined {
  const http = env.HTTP_PROXY ?? env.http_proxy;
  const raw = url.protocol === 'https:' ? (env.HTTPS_PROXY ?? env.https_proxy ?? http) : http;
  if (!raw) return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  for (const entry of (env.NO_PROXY ?? env.no_proxy ?? '').split(/[\s,]+/).filter(Boolean)) {
    if (entry === '*') return undefined;
    const m = /^(?:\*?\.)?(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(entry.toLowerCase());
    if (!m || (m[2] && m[2] !== port)) continue;
    const name = m[1]!.replace(/^\[|\]$/g, '');
    if (host === name || host.endsWith(`.${name}`)) return undefined;
  }
  try {
    return new URL(raw.includes('://') ? raw : `http://${raw}`);
  } catch {
    return undefined;
  }
}

type Done = (err: Error | null, socket?: net.Socket) => void;

// An idle connection is closed after this long, or a second before the server's `Keep-Alive: timeout=N` says it
// will close it (node honours the hint only below an agent timeout), so a request is not sent on a dying socket.
const IDLE_MS = 30_000;
type ConnectOptions = tls.ConnectionOptions & { host: string; port: number };

export class Agents {
  private readonly agents = new Map<string, http.Agent>();
  /** CONNECT requests whose tunnel is not open yet: a proxy that never answers must not keep the process alive. */
  private readonly tunnels = new Set<http.ClientRequest>();

  /** `proxy` picks the proxy for a URL (none for the embedded emulator, which is on loopback). */
  constructor(private readonly proxy: (url: URL) => URL | undefined = () => undefined) {}

  /** The keep-alive agent for `url`: direct, or through a CONNECT tunnel of its proxy. */
  for(url: URL): http.Agent {
    const proxy = this.proxy(url);
    const key = `${url.protocol}${proxy?.href ?? ''}`;
    let agent = this.agents.get(key);
    if (agent) return agent;
    const secure = url.protocol === 'https:';
    agent = new (secure ? https.Agent : http.Agent)({ keepAlive: true, timeout: IDLE_MS });
    if (proxy) {
      (agent as unknown as { createConnection: (o: ConnectOptions, done: Done) => undefined }).createConnection = (options, done) => {
        const target = `${options.host}:${options.port}`;
        const tunnel = http.request({ host: proxy.hostname, port: proxy.port || 80, method: 'CONNECT', path: target, headers: { host: target }, agent: false });
        this.tunnels.add(tunnel);
        tunnel.once('close', () => this.tunnels.delete(tunnel));
        tunnel.once('connect', (res, socket) => {
          this.tunnels.delete(tunnel);
          if (res.statusCode !== 200) {
            socket.destroy();
            return done(Object.assign(new Error(`the proxy ${proxy.host} answered ${res.statusCode} to CONNECT`), { code: 'EPROXY' }));
          }
          done(null, secure ? tls.connect({ ...options, socket, servername: options.servername ?? (net.isIP(options.host) ? undefined : options.host) }) : socket);
        });
        tunnel.once('error', (err) => done(err));
        tunnel.end();
        return undefined;
      };
    }
    this.agents.set(key, agent);
    return agent;
  }

  /** Closes every connection, idle or not: nothing outlives the command. */
  close(): void {
    for (const tunnel of this.tunnels) tunnel.destroy();
    this.tunnels.clear();
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}
