// What the emulator tells whoever runs it, apart from its answers: serve's stderr, or a command's --verbose for the
// emulator it runs itself. Clients are told little (a shared serve answers people it does not know); the operator is
// told what went wrong, a line per kind of failure a minute, so a failure that repeats under load stays readable.
import { EmulatorError } from './errors.js';

/** Where the operator's lines go. */
export type OperatorLog = (message: string) => void;

/** Whether a line keyed `key` is due: its first time, or a minute after it was last told. */
export class OncePerMinute {
  private readonly told = new Map<string, number>();

  due(key: string, now = Date.now()): boolean {
    const last = this.told.get(key);
    if (last !== undefined && now - last < 60_000) return false;
    // Bounded whatever the keys: a flood of distinct ones starts the count again.
    if (this.told.size >= 256) this.told.clear();
    this.told.set(key, now);
    return true;
  }
}

/**
 * Failures that are no answer of the service's (a defect in a request, a sweep that could not finish): the operator
 * is told where and the error with its stack, once per distinct message a minute. The service's own refusals
 * (EmulatorError: a store that does not answer, a bad request) are not defects, and are told elsewhere if at all.
 */
export class InternalErrors {
  private readonly once = new OncePerMinute();
  constructor(private readonly log: OperatorLog) {}

  /** `where`: `ray <id>` for a request, or what the failed work was doing. */
  tell(where: string, err: unknown, now = Date.now()): void {
    if (err instanceof EmulatorError) return;
    const message = err instanceof Error ? err.message : String(err);
    if (!this.once.due(message, now)) return;
    this.log(`internal error (${where}): ${err instanceof Error ? (err.stack ?? message) : message}`);
  }
}
