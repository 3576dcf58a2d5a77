// A game server on the official SDK (@rivet-gg/api) that reads only its lobby's environment, as the matchmaker
// starts it: `gamehost emulator serve --run 'node server.mjs'`, by hand after `eval "$(gamehost emulator lobby env
// "$LOBBY")"`, or in the container the Dockerfile beside it makes. What it calls and when: docs/game-server.md.
//
// Its protocol, a line at a time over TCP on PORT_default: a client's first line is the player token find or join
// gave it; the server presents it to the matchmaker (players connected) and answers `welcome <players connected>`,
// or `refused <error code>` and closes. Each later line comes back as `echo <line>`. A closed connection is the
// player gone (players disconnected). On SIGTERM (or Ctrl-C) it closes the lobby, says `server stopping` to each
// player, lets them go and exits 0.
import net from 'node:net';
import readline from 'node:readline';
import { RivetClient } from '@rivet-gg/api';

for (const name of ['RIVET_API_ENDPOINT', 'RIVET_TOKEN', 'PORT_default']) {
  if (!process.env[name]) {
    console.error(`server: ${name} is not set: start the server with its lobby's environment (gamehost emulator lobby env <lobby-id>)`);
    process.exit(2);
  }
}

// The endpoint given, always: without `environment` the SDK talks to Rivet's old cloud. The token is the lobby's.
const rivet = new RivetClient({ environment: process.env.RIVET_API_ENDPOINT, token: process.env.RIVET_TOKEN });
const errorCode = (err) => err?.body?.code ?? err?.message ?? String(err);
/** Reports a refused call, but for MATCHMAKER_LOBBY_STOPPED: the lobby is over (its last player left, a stop), and
 * the SIGTERM that ends this server follows. */
function refused(what, err) {
  if (errorCode(err) !== 'MATCHMAKER_LOBBY_STOPPED') console.error(`server: ${what} refused: ${errorCode(err)}`);
}

/** The sockets of admitted players, each with its player token. */
const players = new Map();
/** The matchmaker calls still under way, which a stop waits for. */
const pending = new Set();
function call(promise) {
  pending.add(promise);
  promise.finally(() => pending.delete(promise)).catch(() => {});
  return promise;
}

// The lobby's state (what `lobby list --state` and a client's list show), one write at a time so the last stays last.
let stateWrites = Promise.resolve();
function publishState() {
  const state = { players: players.size };
  stateWrites = stateWrites.then(() => call(rivet.matchmaker.lobbies.setState(state))).catch((err) => refused('state', err));
}

let stopping = false;

const server = net.createServer((socket) => {
  socket.on('error', () => {}); // A player's connection reset: its close follows.
  let token;
  // One line at a time, in order: a line sent right after the token waits for the matchmaker's answer.
  let handled = Promise.resolve();
  readline.createInterface({ input: socket }).on('line', (line) => {
    handled = handled.then(() => handle(line));
  });
  async function handle(line) {
    if (token !== undefined) {
      if (players.has(socket)) socket.write(`echo ${line}\n`);
      return;
    }
    token = line.trim();
    try {
      await call(rivet.matchmaker.players.connected({ playerToken: token }));
    } catch (err) {
      console.log(`player refused: ${errorCode(err)}`);
      socket.end(`refused ${errorCode(err)}\n`);
      return;
    }
    if (socket.destroyed || stopping) {
      // Gone, or the server stopping, while the matchmaker answered: the player goes again.
      await call(rivet.matchmaker.players.disconnected({ playerToken: token })).catch(() => {});
      socket.destroy();
      return;
    }
    players.set(socket, token);
    console.log(`player admitted (${players.size} connected)`);
    socket.write(`welcome ${players.size}\n`);
    publishState();
  }
  socket.on('close', async () => {
    const gone = players.get(socket);
    if (gone === undefined) return;
    players.delete(socket);
    try {
      await call(rivet.matchmaker.players.disconnected({ playerToken: gone }));
      console.log(`player left (${players.size} connected)`);
    } catch (err) {
      refused('players disconnected', err);
    }
    if (!stopping) publishState();
  });
});

// Every address, as production's servers do: in a container the port is reached from outside it.
server.listen(Number(process.env.PORT_default), async () => {
  console.log(`listening on ${server.address().port}`);
  try {
    await call(rivet.matchmaker.lobbies.ready());
    console.log(`ready (lobby ${process.env.RIVET_LOBBY_ID})`);
  } catch (err) {
    console.error(`server: ready refused: ${errorCode(err)}`);
    process.exit(1);
  }
});

async function stop(signal) {
  if (stopping) return;
  stopping = true;
  console.log(`${signal}: stopping`);
  server.close();
  // No new player is sent here while the players leave (the lobby stops once this process ends).
  await call(rivet.matchmaker.lobbies.setClosed({ isClosed: true })).catch((err) => refused('closed', err));
  // Each player told, then let go; each close sends its players disconnected, which the exit waits for.
  const sockets = [...players.keys()];
  const closed = sockets.map((socket) => new Promise((resolve) => socket.once('close', resolve)));
  for (const socket of sockets) socket.end('server stopping\n', () => socket.destroy());
  await Promise.all(closed);
  await Promise.allSettled([...pending]);
  await stateWrites;
  console.log('stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void stop('SIGTERM'));
process.on('SIGINT', () => void stop('SIGINT'));
