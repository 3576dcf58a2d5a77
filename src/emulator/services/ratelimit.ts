// The service's per-IP rate limits on the matchmaker's routes (SERVICE-FACTS.md): each route's counter per client
// address in fixed windows. Kept in the process: each replica counts its own requests (a documented deviation).
import { EmulatorError } from '../errors.js';
import type { Clock } from './clock.js';

const MINUTE = 60_000;
const BUCKET_WINDOW = 15 * MINUTE;

/** Per counter: how many requests in which window; a request must pass every one. */
export const RATE_LIMITS = {
  // find and join share one counter.
  find: [
    { count: 16, windowMs: MINUTE },
    { count: 200, windowMs: 60 * MINUTE },
  ],
  create: [{ count: 3, windowMs: BUCKET_WINDOW }],
  list: [{ count: 4, windowMs: BUCKET_WINDOW }],
  regions: [{ count: 32, windowMs: BUCKET_WINDOW }],
  ready: [{ count: 512, windowMs: BUCKET_WINDOW }],
  lobby: [{ count: 1024, windowMs: BUCKET_WINDOW }],
  players: [{ count: 16384, windowMs: BUCKET_WINDOW }],
} as const;

export type RateCounter = keyof typeof RATE_LIMITS;

// Addresses remembered at most per counter and window; the oldest is forgotten first.
const MAX_KEYS = 10_000;

export class RateLimits {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly enabled: boolean,
    private readonly clock: Clock,
  ) {}

  /** Counts one request of `address` on `counter`; 429 API_RATE_LIMIT (Retry-After an HTTP-date) past a limit. */
  take(counter: RateCounter, address: string): void {
    if (!this.enabled) return;
    const now = this.clock.now();
    const entries = RATE_LIMITS[counter].map((limit) => {
      const key = `${counter}/${limit.windowMs}/${address}`;
      const start = now - (now % limit.windowMs);
      let entry = this.windows.get(key);
      if (entry === undefined || entry.start !== start) {
        if (entry === undefined && this.windows.size >= MAX_KEYS) this.windows.delete(this.windows.keys().next().value!);
        entry = { start, count: 0 };
        this.windows.set(key, entry);
      }
      return { limit, entry };
    });
    const over = entries.find(({ limit, entry }) => entry.count >= limit.count);
    if (over !== undefined) {
      const retryAt = over.entry.start + over.limit.windowMs;
      throw new EmulatorError(
        'API_RATE_LIMIT',
        { reason: `at most ${over.limit.count} of these requests per ${over.limit.windowMs / MINUTE} min from one address.` },
        { retry_after_ms: retryAt - now },
        { 'retry-after': new Date(retryAt).toUTCString() },
      );
    }
    for (const { entry } of entries) entry.count++;
  }
}
