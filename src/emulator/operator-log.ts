// What the emulator tells whoever runs it, apart from its answers: serve's stderr, or a command's --verbose for the
// emulator it runs itself. Clients are told little (a shared serve answers people it does not know); the operator is
// told what went wrong, a line per kind of failure a minute, so a failure that repeats under load stays readable.
import { EmulatorError } from './errors.js';

/** Where the operator's lines go. */
export type OperatorLog = (message: string) => void;

const REPEAT_AFTER_MS = 60_000;

/**
 * Failures that are no answer of the service's (a defect in a request, a sweep that could not finish): the operator
 * is told where and the error with its stack, once per distinct message a minute. The service's own refusals
 * (EmulatorError: a store that does not answer, a bad request) are not defects, and are told elsewhere if at all.
 */
export class InternalErrors {
  private readonly told = new Map<string, number>();
  constructor(private readonly log: OperatorLog) {}

  /** `where`: `ray <id>` for a request, or what the failed work was doing. */
  tell(where: string, err: unknown, now = Date.now()): void {
    if (err instanceof EmulatorError) return;
    const message = err instanceof Error ? err.message : String(err);
    const last = this.told.get(message);
    if (last !== undefined && now - last < REPEAT_AFTER_MS) return;
    if (this.told.size >= 256) this.told.clear();
    this.told.set(message, now);
    this.log(`internal error (${where}): ${err instanceof Error ? (err.stack ?? message) : message}`);
  }
}
