// The emulator's own clock: the wall clock when serving, a hand-moved one in tests (no test sleeps for state).

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that stands still until moved: lobby lifecycles, idle lifetimes and expiries without waiting. */
export class ManualClock implements Clock {
  constructor(private ms: number = Date.now()) {}
  now(): number {
    return this.ms;
  }
  /** Moves time forward by `ms` milliseconds. */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new Error(`a clock only moves forward, not by ${ms} ms`);
    this.ms += ms;
  }
}
