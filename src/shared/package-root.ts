// The gamehost package's own directory, found from this module upwards: its code runs from src/ (the tests), dist/
// (what tsc makes) and dist/bundle/ (what bin/gamehost.js runs), each at another depth below it.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface OwnPackage {
  root: string;
  json: { name: string; version: string };
}

let found: OwnPackage | undefined;

/** The nearest directory above this module holding gamehost's package.json, and that file as read there (once). */
function ownPackage(): OwnPackage {
  if (found !== undefined) return found;
  const start = path.dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = path.dirname(dir)) {
    try {
      const json = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as OwnPackage['json'];
      if (json.name === 'gamehost') return (found = { root: dir, json });
    } catch {
      // No package.json here (or bin/'s, which only says its files are CommonJS): one level up.
    }
    if (path.dirname(dir) === dir) throw new Error(`gamehost's package.json is not in ${start} or above it: the installation is incomplete`);
  }
}

/** The package's own directory. */
export const packageRoot = (): string => ownPackage().root;

/** The version its package.json names. */
export const packageVersion = (): string => ownPackage().json.version;
