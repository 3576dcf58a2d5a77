// Real `gamehost emulator serve` processes for end-to-end tests: start one, read its --json line, stop it.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { BIN } from './bin.js';

// Each test that uses these starts and stops real processes, several seconds' work on a busy machine.
export const SLOW = { timeout: 60_000 };

export interface Info {
  endpoint: string;
  game_id: string;
  namespace_id: string;
  tokens: { cloud: string; public: string; dev: string };
  stores: { records: string; bytes: string };
}

export interface Replica {
  info: Info;
  child: ChildProcess;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: () => string;
}

/** The environment of a CI job pointed at `r` with its seeded game's ids and tokens, its state under `home`. */
export function replicaEnv(home: string, r: Replica): Record<string, string> {
  return {
    HOME: home,
    XDG_DATA_HOME: path.join(home, 'data'),
    XDG_STATE_HOME: path.join(home, 'state'),
    XDG_CONFIG_HOME: path.join(home, 'config'),
    GAMEHOST_ENDPOINT: r.info.endpoint,
    GAMEHOST_TOKEN: r.info.tokens.cloud,
    GAMEHOST_NAMESPACE_TOKEN: r.info.tokens.public,
    GAMEHOST_GAME: r.info.game_id,
    GAMEHOST_NAMESPACE: r.info.namespace_id,
  };
}

/** Starts `emulator serve` with `args`; resolves with its --json start line, or rejects with its stderr. */
export function serve(args: string[], env: Record<string, string | undefined> = {}): Promise<Replica> {
  const child = spawn(process.execPath, [BIN, 'emulator', 'serve', '--port', '0', '--json', ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).once('line', (line) => resolve({ info: JSON.parse(line), child, exit, stderr: () => err }));
    exit.then(({ code }) => reject(new Error(`serve exited ${code} before listening: ${err}`)));
  });
}

export async function stopReplica(r: Replica | undefined): Promise<void> {
  if (!r || r.child.exitCode !== null || r.child.signalCode !== null) return;
  r.child.kill('SIGTERM');
  await r.exit;
}
