// A loopback TCP proxy that can stop forwarding: what a paused database looks like from the emulator (connections
// accepted, nothing answered), for the log-flood bench: the stall of test/helpers/stall-proxy.ts (which the tests
// use, with more: unix sockets, dropped connections, counted requests), in plain JavaScript for node.
import net from 'node:net';

/** Forwards to targetHost:targetPort until stall(); resume() forwards what was held, and everything after. */
export async function stallProxy(targetHost, targetPort) {
  let stalled = false;
  const held = [];
  const sockets = new Set();
  const forward = (from, to) =>
    from.on('data', (chunk) => {
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
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    host: '127.0.0.1',
    port: server.address().port,
    stall: () => void (stalled = true),
    resume() {
      stalled = false;
      for (const [to, chunk] of held.splice(0)) if (!to.destroyed) to.write(chunk);
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
