// Notices a person needs once, not on every command: shown once per shell session (the process that started
// gamehost: its parent), and again after an hour, remembered in the state directory. A state directory that
// cannot be read or written only means the notice is shown every time.
import fs from 'node:fs';
import path from 'node:path';
import type { Env } from '../shared/io.js';
import { writeFileWhole } from '../output/file.js';
import { stateDir } from './paths.js';
import { makeDirsSync } from '../shared/make-dirs.js';

const REMEMBER_MS = 3_600_000;

/** True when `name` was not shown to this shell session in the last hour; records it as shown now. */
export function firstInSession(env: Env, name: string, now: number, session = process.ppid): boolean {
  const file = path.join(stateDir(env), 'notices.json');
  let seen: Record<string, number> = {};
  try {
    const data = JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
    if (data && typeof data === 'object' && !Array.isArray(data)) seen = data as Record<string, number>;
  } catch {
    // Missing or unreadable: nothing was shown.
  }
  const key = `${name} ${session}`;
  const last = seen[key];
  if (typeof last === 'number' && now - last >= 0 && now - last < REMEMBER_MS) return false;
  // Sessions long gone are forgotten, so the file stays small.
  const kept = Object.fromEntries(Object.entries(seen).filter(([, at]) => typeof at === 'number' && now - at < REMEMBER_MS));
  kept[key] = now;
  try {
    makeDirsSync(path.dirname(file));
    writeFileWhole(file, JSON.stringify(kept) + '\n');
  } catch {
    // Shown every time, then.
  }
  return true;
}
