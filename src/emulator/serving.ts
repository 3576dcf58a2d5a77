// A command that would open the emulator in-process on a data directory that a running `emulator serve` uses talks
// to that serve instead: two emulators on one store would each hand out the lobbies the other made (and only serve
// runs their servers). Serve records its pid, start time and endpoint in the data directory (holdDataDir); a
// command takes the endpoint when that process still runs and the endpoint answers to the data directory's own
// tokens (the same secret: that emulator, not whatever took its port since), else refuses in one line.
import { readFileSync } from 'node:fs';
import { dataDirHolders, dataDirPaths, type ServerHold } from './datadir.js';
import { EmulatorFailure } from './errors.js';
import { gameTokens, type GameTokens } from './services/games.js';
import { GAME_ID, NAMESPACE_ID } from './services/ids.js';

/** What a command needs of the emulator a serve runs on its data directory: its endpoint, the seeded game and tokens. */
export interface ServedEmulator {
  endpoint: string;
  gameId: string;
  namespaceId: string;
  tokens: GameTokens;
  /** The serve's process. */
  pid: number;
}

/** How long the serve has to answer the one request that shows it is there. */
const PROBE_TIMEOUT_MS = 3_000;

/**
 * The serve running on `dataDir` when there is one (undefined: none, the command opens the emulator itself);
 * a DATA_DIR_SERVED failure naming its pid and endpoint when one holds the directory but cannot be used from here.
 */
export async function servingEmulator(dataDir: string): Promise<ServedEmulator | undefined> {
  const holders = await liveHolders(dataDir);
  if (holders.length === 0) return undefined;
  const hold = holders[0]!;
  const refuse = (why: string) =>
    new EmulatorFailure(
      'DATA_DIR_SERVED',
      `the data directory ${dataDir} is in use by \`gamehost emulator serve\` (pid ${hold.pid} at ${hold.endpoint}), ${why}: ` +
        `give --endpoint ${hold.endpoint} with its tokens, or stop it (kill ${hold.pid})`,
    );
  let secret: Buffer;
  try {
    secret = readFileSync(dataDirPaths(dataDir).secret);
  } catch {
    throw refuse('and the directory holds no secret to sign its tokens');
  }
  const tokens = gameTokens(secret, GAME_ID, NAMESPACE_ID);
  let status: number;
  try {
    status = await probe(`${hold.endpoint}/cloud/auth/inspect`, tokens.cloud);
  } catch (err) {
    throw refuse(`which does not answer (${describeFailure(err)})`);
  }
  if (status !== 200) throw refuse(`which does not take this directory's tokens (HTTP ${status}: another secret)`);
  return { endpoint: hold.endpoint, gameId: GAME_ID, namespaceId: NAMESPACE_ID, tokens, pid: hold.pid };
}

/** The holders whose process is still the one that wrote the record (a pid given to another process since is not). */
async function liveHolders(dataDir: string): Promise<ServerHold[]> {
  const holders = dataDirHolders(dataDir);
  if (holders.length === 0) return holders;
  // Loaded only when a record is there: the embedded emulator's start pays nothing for it otherwise.
  const { isSameProcess } = await import('./runtime/process.js');
  const live: ServerHold[] = [];
  for (const hold of holders) if (hold.start === undefined || (await isSameProcess(hold.pid, hold.start))) live.push(hold);
  return live;
}

/**
 * The status of one GET with the token. node:http rather than the global fetch: that loads Node's own copy of
 * undici, 30-40 ms of a command that finds a serve.
 */
async function probe(url: string, token: string): Promise<number> {
  const { request } = url.startsWith('https:') ? await import('node:https') : await import('node:http');
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.once('error', reject);
    req.end();
  });
}

function describeFailure(err: unknown): string {
  const e = err as { code?: unknown; name?: string; message?: string; cause?: { name?: string } };
  // The abort of the timeout's signal: an AbortError caused by it.
  if (e.name === 'TimeoutError' || e.cause?.name === 'TimeoutError') return `no answer within ${PROBE_TIMEOUT_MS / 1000} s`;
  if (typeof e.code === 'string') return e.code;
  return e.message || String(err);
}
