// The reference for the PostgreSQL emulator budget: a bare lobby create on node:http and a pg pool of 8, no auth, no
// validation, no token signing; the same two inserts as the emulator (lobby, then its player) in one transaction,
// into the emulator's own tables (so their triggers count for both), in 512 namespaces in turn as the bench spreads
// the emulator's; it answers a lobby-shaped JSON with a 48-byte random token. Prints its endpoint; stops on SIGTERM.
//   node bench/pg-skeleton.js <postgres-url>
import http from 'node:http';
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.argv[2], max: 8 });
const NAMESPACES = 512;
let next = 0;

async function createLobby() {
  const client = await pool.connect();
  const lobbyId = randomUUID();
  const now = Date.now();
  try {
    await client.query('BEGIN');
    await client.query(
      `INSERT INTO lobbies (lobby_id, namespace_id, game_mode, region_id, region_name, max_players, publicity, tags,
         lobby_config, create_ts, start_ts, ready_ts, idle_lifetime_ms, idle_stop_ts)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
      [lobbyId, `skeleton-${next++ % NAMESPACES}`, 'default', 'lnd-fra', 'Frankfurt', 32, 'public', '{"map":"dust"}', null, now, now, now, null, null],
    );
    await client.query('INSERT INTO players (player_id, lobby_id, create_ts) VALUES ($1, $2, $3)', [randomUUID(), lobbyId, now]);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
  return lobbyId;
}

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    createLobby().then(
      (lobbyId) => {
        const body = JSON.stringify({ lobby: { lobby_id: lobbyId }, player: { token: randomBytes(48).toString('base64url') } });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      },
      () => {
        res.writeHead(500);
        res.end();
      },
    );
  });
});
server.keepAliveTimeout = 5_000;
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ endpoint: `http://127.0.0.1:${server.address().port}` })));
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  pool.end().then(() => process.exit(0));
});
