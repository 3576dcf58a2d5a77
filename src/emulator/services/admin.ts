// The admin routes' guard (`/_emulator/*`): when the emulator has an admin token, every admin request must carry
// it as a bearer token. Compared in constant time; an address that sends a wrong one too often in a row is told
// to wait (429 with Retry-After) instead of being given more guesses.
import { createHash, timingSafeEqual } from 'node:crypto';
import { EmulatorError, fail } from '../errors.js';
import type { Clock } from './clock.js';

/** Wrong tries in a row from one address before it must wait. */
export const ADMIN_MAX_FAILURES = 50;
export const ADMIN_LOCKOUT_MS = 60_000;
// Addresses remembered at most; the oldest is forgotten first.
const MAX_ADDRESSES = 10_000;

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

export class AdminGuard {
  private readonly expected: Buffer | null;
  private readonly failures = new Map<string, { count: number; lockedUntil: number }>();

  /** No token: the routes answer anyone (the embedded emulator and `serve` on loopback). */
  constructor(
    token: string | undefined,
    private readonly clock: Clock,
  ) {
    this.expected = token ? digest(token) : null;
  }

  get enabled(): boolean {
    return this.expected !== null;
  }

  /** Throws 401 for a missing or wrong token, 429 while `address` has to wait. */
  check(header: string | undefined, address: string): void {
    if (this.expected === null) return;
    const now = this.clock.now();
    const seen = this.failures.get(address);
    if (seen !== undefined && seen.lockedUntil > now) {
      const seconds = Math.ceil((seen.lockedUntil - now) / 1000);
      throw new EmulatorError('API_RATE_LIMIT', { reason: `too many wrong admin tokens from this address; try again in ${seconds} s.` }, undefined, {
        'retry-after': String(seconds),
      });
    }
    const given = header?.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : undefined;
    // Digests have one length, so the comparison takes the same time whatever was sent.
    if (given !== undefined && timingSafeEqual(digest(given), this.expected)) {
      if (seen !== undefined) this.failures.delete(address);
      return;
    }
    const count = (seen?.count ?? 0) + 1;
    if (seen === undefined && this.failures.size >= MAX_ADDRESSES) this.failures.delete(this.failures.keys().next().value!);
    this.failures.set(address, { count, lockedUntil: count >= ADMIN_MAX_FAILURES ? now + ADMIN_LOCKOUT_MS : 0 });
    fail('API_UNAUTHORIZED', {
      reason: given === undefined ? 'the admin routes need "Authorization: Bearer <admin token>".' : 'the admin token is wrong.',
    });
  }
}
