// Real free ports for a lobby's ports: what the system hands out for port 0 on loopback, so a server started by
// hand with the lobby's environment can listen where find and join tell clients to connect.
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';
import type { PortSetting } from '../config.js';
import type { LobbyPort } from './environment.js';

export const LOBBY_HOSTNAME = '127.0.0.1';

/** A port free on loopback for the protocol (`udp`: a datagram port; `tcp` and `http`: a stream port). */
function freePort(protocol: 'tcp' | 'udp' | 'http' = 'tcp'): Promise<number> {
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

/**
 * A new lobby's ports: its game mode's (a free port of each single one's protocol on this host, each range as
 * given), else the default ones: `default`, a free TCP port, and `game-range`, ten ports placed by the lobby id.
 */
export async function newLobbyPorts(lobbyId: string, settings: Record<string, PortSetting> | undefined): Promise<Record<string, LobbyPort>> {
  if (settings === undefined) {
    const h = parseInt(lobbyId.replace(/-/g, '').slice(-8), 16) >>> 0;
    const rangeMin = 40000 + ((h >>> 14) % 2000) * 10;
    return { default: { port: await freePort() }, 'game-range': { min: rangeMin, max: rangeMin + 9 } };
  }
  const ports: Record<string, LobbyPort> = {};
  const taken = new Set<number>();
  for (const [label, port] of Object.entries(settings)) {
    if (port.range !== undefined) {
      ports[label] = { ...port.range, protocol: port.protocol };
      continue;
    }
    // Each port once: the system may hand out a port it just handed out, closed since.
    let free = await freePort(port.protocol);
    while (taken.has(free)) free = await freePort(port.protocol);
    taken.add(free);
    ports[label] = { port: free, protocol: port.protocol };
  }
  return ports;
}
