// Real free ports for a lobby's ports: what the system hands out for port 0 on loopback, so a server started by
// hand with the lobby's environment can listen where find and join tell clients to connect.
import { createServer } from 'node:net';

export const LOBBY_HOSTNAME = '127.0.0.1';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, LOBBY_HOSTNAME, () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
