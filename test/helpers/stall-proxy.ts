// A loopback TCP proxy that can stop forwarding: what a paused database or bucket looks like from the emulator
// (connections accepted, nothing answered), without pausing a server other test files share. Its target may be a unix
// socket (a Docker daemon's), and its connections can be dropped at once (a daemon restarting, a proxy's idle cut).
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface StallProxy {
  /** host:port to connect to instead of the target. */
  host: string;
  port: number;
  /** From now on nothing is forwarded either way (what arrives is held); new connections are accepted and held too. */
  stall(): void;
  /** Forwards what was held, and everything after. */
  resume(): void;
  /** Ends every connection open now, both ways; new ones are accepted as before. */
  drop(): void;
  /** Requests seen so far whose first line matches (a plain-HTTP target): e.g. /\/stats/. */
  requests(pattern: RegExp): number;
  close(): Promise<void>;
}

/** A proxy to targetHost:targetPort, or to the unix socket at targetHost when no port is given. */
export async function stallProxy(targetHost: string, targetPort?: number): Promise<StallProxy> {
  let stalled = false;
  const firstLines: string[] = [];
  const held: [net.Socket, Buffer][] = [];
  const sockets = new Set<net.Socket>();
  const forward = (from: net.Socket, to: net.Socket) =>
    from.on('data', (chunk: Buffer) => {
      if (stalled) held.push([to, chunk]);
      else to.write(chunk);
    });
  const server = net.createServer((client) => {
    const upstream = targetPort === undefined ? net.connect(targetHost) : net.connect(targetPort, targetHost);
    client.on('data', (chunk: Buffer) => {
      // Request lines, as far as a chunk shows them (enough to count the calls of a client that sends one per chunk).
      for (const m of chunk.toString('latin1').matchAll(/^(?:GET|POST|PUT|DELETE|HEAD) \S+ HTTP\/1\.1$/gm)) firstLines.push(m[0]);
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    forward(client, upstream);
    forward(upstream, client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    host: '127.0.0.1',
    port: (server.address() as AddressInfo).port,
    stall: () => void (stalled = true),
    resume() {
      stalled = false;
      for (const [to, chunk] of held.splice(0)) if (!to.destroyed) to.write(chunk);
    },
    drop() {
      for (const s of sockets) s.destroy();
    },
    requests: (pattern) => firstLines.filter((l) => pattern.test(l)).length,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
