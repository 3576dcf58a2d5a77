// The emulator's configuration file (`gamehost emulator serve --config`, or GAMEHOST_EMULATOR_CONFIG for the
// embedded one): a JSON object with any of the EmulatorConfig fields.
import fs from 'node:fs';
import { EmulatorConfigError, checkConfig, type EmulatorConfig } from '../emulator/config.js';
import { UsageError, describeFsError } from '../errors.js';

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
