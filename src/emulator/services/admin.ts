// The admin routes' guard: when the emulator has an admin token, every admin request must carry it as a bearer
// token. The token is the secret, long enough that guessing is hopeless; so the right one is always let in, and
// only wrong tries count: an address that sends too many in a short while is told to wait (429 with Retry-After),
// and may try again as soon as that wait is over.
import { createHash, timingSafeEqual } from 'node:crypto';
import { EmulatorError, fail } from '../errors.js';
import type { Clock } from './clock.js';

/** The shortest admin token the emulator starts with (`openssl rand -hex 32` makes 64 characters). */
export const ADMIN_TOKEN_MIN_LENGTH = 32;
/** Wrong tries from one address within ADMIN_LOCKOUT_MS of its first before it must wait. */
export const ADMIN_MAX_FAILURES = 50;
/** How long the counting window lasts, and how long an address that filled it waits. */
export const ADMIN_LOCKOUT_MS = 60_000;
// Addresses remembered at most; the oldest is forgotten first.
const MAX_ADDRESSES = 10_000;

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/** Why `token` cannot be an admin token, or undefined when it can. */
export function adminTokenProblem(token: string): string | undefined {
  if (token.length < ADMIN_TOKEN_MIN_LENGTH)
    return `the admin token must be at least ${ADMIN_TOKEN_MIN_LENGTH} characters; this one has ${token.length}`;
  return undefined;
}

/** An admin token the emulator refuses to start with (see adminTokenProblem). */
export class AdminTokenError extends Error {}

/** Throws AdminTokenError for a token the emulator must not start with. */
export function checkAdminToken(token: string): void {
  const problem = adminTokenProblem(token);
  if (problem !== undefined) throw new AdminTokenError(problem);
}

interface Failures {
  /** Wrong tries since `since`. */
  count: number;
  since: number;
  /** 0, or until when the address must wait. */
  lockedUntil: number;
}

export class AdminGuard {
  private readonly expected: Buffer | null;
  private readonly failures = new Map<string, Failures>();

  /** No token: the routes answer anyone (the embedded emulator and `serve` on loopback). */
  constructor(
    token: string | undefined,
    private readonly clock: Clock,
  ) {
    if (token !== undefined) checkAdminToken(token);
    this.expected = token ? digest(token) : null;
  }

  get enabled(): boolean {
    return this.expected !== null;
  }

  /** Throws 401 for a missing or wrong token, 429 while `address` has to wait; the right token always passes. */
  check(header: string | undefined, address: string): void {
    if (this.expected === null) return;
    const given = header?.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : undefined;
    // Digests have one length, so the comparison takes the same time whatever was sent.
    if (given !== undefined && timingSafeEqual(digest(given), this.expected)) return;
    const now = this.clock.now();
    let seen = this.failures.get(address);
    if (seen !== undefined && seen.lockedUntil > now) {
      const seconds = Math.ceil((seen.lockedUntil - now) / 1000);
      throw new EmulatorError('API_RATE_LIMIT', { reason: `too many wrong admin tokens from this address; try again in ${seconds} s.` }, undefined, {
        'retry-after': String(seconds),
      });
    }
    // A wait that is over, or a window that has passed, starts the count again.
    if (seen !== undefined && (seen.lockedUntil !== 0 || now - seen.since >= ADMIN_LOCKOUT_MS)) {
      this.failures.delete(address);
      seen = undefined;
    }
    if (seen === undefined) {
      if (this.failures.size >= MAX_ADDRESSES) this.failures.delete(this.failures.keys().next().value!);
      seen = { count: 0, since: now, lockedUntil: 0 };
      this.failures.set(address, seen);
    }
    seen.count++;
    if (seen.count >= ADMIN_MAX_FAILURES) seen.lockedUntil = now + ADMIN_LOCKOUT_MS;
    fail('API_UNAUTHORIZED', {
      reason: given === undefined ? 'the admin routes need "Authorization: Bearer <admin token>".' : 'the admin token is wrong.',
    });
  }
}
