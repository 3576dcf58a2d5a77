// The emulator's configuration file (`gamehost emulator serve --config`, or GAMEHOST_EMULATOR_CONFIG for the
// embedded one): a JSON object with any of the EmulatorConfig fields.
import fs from 'node:fs';
import { EmulatorConfigError, checkConfig, resolveConfig, type EmulatorConfig } from '../emulator/config.js';
import { UsageError, describeFsError } from '../errors.js';

/**
 * Checks a whole config (a file and the flags given with it) as the emulator will: what only the whole shows, such
 * as a command for every game mode where the emulator runs servers. A usage error saying what is missing.
 */
export function checkWholeConfig(config: Partial<EmulatorConfig> | undefined, source: string): void {
  try {
    resolveConfig(config);
  } catch (err) {
    if (err instanceof EmulatorConfigError) throw new UsageError(`${source}: ${err.message.replace(/^Invalid emulator config: /, '')}`);
    throw err;
  }
}

/** Reads and checks the file with the emulator's own check; any problem is a usage error naming the file. */
export function loadEmulatorConfig(file: string): Partial<EmulatorConfig> {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    const why = err instanceof SyntaxError ? `not valid JSON (${err.message})` : describeFsError(err);
    throw new UsageError(`emulator config ${file}: ${why}`);
  }
  try {
    return checkConfig(raw);
  } catch (err) {
    if (err instanceof EmulatorConfigError) throw new UsageError(`emulator config ${file}: ${err.message}`);
    throw err;
  }
}
