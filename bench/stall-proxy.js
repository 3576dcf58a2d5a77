// A loopback TCP proxy that can stop forwarding: what a paused database or bucket looks like from the emulator
// (connections accepted, nothing answered), without pausing a server other test files share. Its target may be a unix
// socket (a Docker daemon's), and its connections can be dropped at once (a daemon restarting, a proxy's idle cut).
// Plain JavaScript, so the benches run it with node as it is; the tests have its types from stall-proxy.d.ts.
import net from 'node:net';

/** A proxy to targetHost:targetPort, or to the unix socket at targetHost when no port is given. */
export async function stallProxy(targetHost, targetPort) {
  let stalled = false;
  const firstLines = [];
  const held = [];
  const sockets = new Set();
  const forward = (from, to) =>
    from.on('data', (chunk) => {
      if (stalled) held.push([to, chunk]);
      else to.write(chunk);
    });
  const server = net.createServer((client) => {
    const upstream = targetPort === undefined ? net.connect(targetHost) : net.connect(targetPort, targetHost);
    client.on('data', (chunk) => {
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
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    host: '127.0.0.1',
    port: server.address().port,
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
      await new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
