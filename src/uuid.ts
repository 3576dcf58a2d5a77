// The service's ids are UUIDs: checked where they are given (a command's operand, a flag, the environment, a
// profile), one line naming where, before any of them reaches a URL. Loaded for every --help through
// src/commands/args.ts, so it imports nothing more than errors.ts.
import { UsageError } from './errors.js';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An id of the service (a UUID), lower-cased as the service writes it; `what` names it: `the lobby id`, `--game`. */
export function parseUuid(what: string, raw: string): string {
  const id = raw.trim();
  if (!UUID.test(id)) throw new UsageError(`${what} must be a UUID, not "${raw}"`);
  return id.toLowerCase();
}

/** A namespace's name id as the service allows it: 1 to 16 of [0-9a-z-], no leading, trailing or double "-". */
export const NAME_ID = /^(?!-)(?!.*--)[0-9a-z-]{1,16}(?<!-)$/;
