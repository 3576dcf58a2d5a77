// A loopback TCP proxy that can stop forwarding: what a paused database or bucket looks like from the emulator
// (connections accepted, nothing answered), without pausing a server other test files share.
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
  close(): Promise<void>;
}

export async function stallProxy(targetHost: string, targetPort: number): Promise<StallProxy> {
  let stalled = false;
  const held: [net.Socket, Buffer][] = [];
  const sockets = new Set<net.Socket>();
  const forward = (from: net.Socket, to: net.Socket) =>
    from.on('data', (chunk: Buffer) => {
      if (stalled) held.push([to, chunk]);
      else to.write(chunk);
    });
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, targetHost);
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
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
