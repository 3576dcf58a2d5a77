// Real free ports for a lobby's ports: what the system hands out for port 0 on loopback, so a server started by
// hand with the lobby's environment can listen where find and join tell clients to connect.
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';

export const LOBBY_HOSTNAME = '127.0.0.1';

/** A port free on loopback for the protocol (`udp`: a datagram port; `tcp` and `http`: a stream port). */
export function freePort(protocol: 'tcp' | 'udp' | 'http' = 'tcp'): Promise<number> {
  if (protocol === 'udp') {
    return new Promise((resolve, reject) => {
      const socket = createSocket('udp4');
      socket.unref();
      socket.once('error', reject);
      socket.bind(0, LOBBY_HOSTNAME, () => {
        const { port } = socket.address();
        socket.close(() => resolve(port));
      });
    });
  }
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
