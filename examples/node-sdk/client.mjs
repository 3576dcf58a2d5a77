// A game client on the official SDK (@rivet-gg/api): finds a lobby of a game mode (the matchmaker's find, which
// answers once the lobby's server is ready), connects to the port it was given, presents its player token, then
// sends each line of its input and prints the server's answers; the end of its input (Ctrl-D) leaves the game.
//   . ./emulator.env   # GAMEHOST_ENDPOINT and GAMEHOST_NAMESPACE_TOKEN, from `gamehost emulator serve --env`
//   node client.mjs [game-mode]
// Exit code: 0 once it played and left, 1 when the find or the server refused it or the connection failed.
import net from 'node:net';
import readline from 'node:readline';
import { RivetClient } from '@rivet-gg/api';

for (const name of ['GAMEHOST_ENDPOINT', 'GAMEHOST_NAMESPACE_TOKEN']) {
  if (!process.env[name]) {
    console.error(`client: ${name} is not set: source the lines of \`gamehost emulator serve --env\` first`);
    process.exit(2);
  }
}
const gameMode = process.argv[2] ?? 'default';

// A client's token is the namespace's public token; the endpoint given, else the SDK talks to Rivet's old cloud.
const rivet = new RivetClient({ environment: process.env.GAMEHOST_ENDPOINT, token: process.env.GAMEHOST_NAMESPACE_TOKEN });

let found;
try {
  found = await rivet.matchmaker.lobbies.find({ gameModes: [gameMode] });
} catch (err) {
  const body = err?.body;
  if (body?.code) console.error(`client: find refused: ${body.code}: ${body.message}`);
  else console.error(`client: could not find a lobby at ${process.env.GAMEHOST_ENDPOINT}: ${err?.message ?? err}`);
  process.exit(1);
}
const { hostname, port } = found.ports.default;
console.log(`found lobby ${found.lobby.lobbyId} in ${found.lobby.region.displayName}, its server at ${hostname}:${port}`);

const socket = net.connect(port, hostname);
socket.on('error', (err) => {
  console.error(`client: ${hostname}:${port}: ${err.message}`);
  process.exit(1);
});
socket.write(`${found.player.token}\n`);

let admitted = false;
readline.createInterface({ input: socket }).on('line', (line) => {
  if (!admitted) {
    if (!line.startsWith('welcome ')) {
      console.error(`client: the server refused the player: ${line}`);
      process.exit(1);
    }
    admitted = true;
    console.log(`admitted: ${line.slice('welcome '.length)} player(s) connected`);
    // Now the input: each line to the server; its end leaves the game.
    readline
      .createInterface({ input: process.stdin })
      .on('line', (l) => socket.write(`${l}\n`))
      .on('close', () => socket.end());
    return;
  }
  console.log(`server: ${line}`);
});
socket.on('close', () => {
  if (!admitted) {
    console.error('client: the server closed the connection before admitting the player');
    process.exit(1);
  }
  console.log('disconnected');
  process.exit(0);
});
