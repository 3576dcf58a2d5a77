// Where gamehost keeps things on disk, per platform conventions (XDG on Linux), all derived from the
// command's environment so tests and users can move them.
import os from 'node:os';
import path from 'node:path';
import type { Env } from '../shared/io.js';

const APP = 'gamehost';

function home(env: Env): string {
  return env.HOME || env.USERPROFILE || os.homedir();
}

/** Long-lived data: the embedded emulator's store. */
export function dataDir(env: Env): string {
  if (env.XDG_DATA_HOME) return path.join(env.XDG_DATA_HOME, APP);
  if (process.platform === 'win32') return path.join(env.LOCALAPPDATA || path.join(home(env), 'AppData', 'Local'), APP, 'Data');
  if (process.platform === 'darwin') return path.join(home(env), 'Library', 'Application Support', APP);
  return path.join(home(env), '.local', 'share', APP);
}

/** State that may be lost without harm but helps: upload journals, crash reports. */
export function stateDir(env: Env): string {
  if (env.XDG_STATE_HOME) return path.join(env.XDG_STATE_HOME, APP);
  if (process.platform === 'win32') return path.join(env.LOCALAPPDATA || path.join(home(env), 'AppData', 'Local'), APP, 'State');
  if (process.platform === 'darwin') return path.join(home(env), 'Library', 'Application Support', APP, 'state');
  return path.join(home(env), '.local', 'state', APP);
}

/** Profiles and settings. */
export function configDir(env: Env): string {
  if (env.XDG_CONFIG_HOME) return path.join(env.XDG_CONFIG_HOME, APP);
  if (process.platform === 'win32') return path.join(env.APPDATA || path.join(home(env), 'AppData', 'Roaming'), APP, 'Config');
  if (process.platform === 'darwin') return path.join(home(env), 'Library', 'Preferences', APP);
  return path.join(home(env), '.config', APP);
}

/** The embedded emulator's data directory: GAMEHOST_EMULATOR_DIR, else <data dir>/emulator. */
export function emulatorDir(env: Env): string {
  return env.GAMEHOST_EMULATOR_DIR || path.join(dataDir(env), 'emulator');
}
