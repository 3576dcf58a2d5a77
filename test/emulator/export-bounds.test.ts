// What one game's history exports may take of a replica: one at a time, a quarter of its time, 1,000 exports and
// 256 MiB kept at once. Once unbounded: a cloud token asking again and again for a 7.7 MB history kept a copy of
// each for an hour, and kept the replica building them.
import { describe, expect, it } from 'vitest';
import { EmulatorError } from '../../src/emulator/errors.js';
import { ExportBounds } from '../../src/emulator/services/export-bounds.js';

const HOUR = 3_600_000;

/** The 429 `f` throws: its reason and Retry-After in seconds. */
function refusal(f: () => unknown): { reason: string; retryAfter: number } {
  try {
    f();
  } catch (err) {
    if (!(err instanceof EmulatorError) || err.code !== 'API_RATE_LIMIT') throw err;
    return { reason: String(err.params.reason), retryAfter: Number(err.headers!['retry-after']) };
  }
  throw new Error('not refused');
}

describe('a game’s exports on one replica', () => {
  it('one at a time per game; other games meanwhile as they like', () => {
    const bounds = new ExportBounds({ monotonic: () => 0 });
    const end = bounds.begin('a', 0);
    expect(refusal(() => bounds.begin('a', 0))).toEqual({ reason: 'an export of this game is being made; ask again when it is done.', retryAfter: 1 });
    bounds.begin('b', 0)();
    end();
    // Ended (here without keeping anything, as a failed one ends), the game's next may begin.
    bounds.begin('a', 0)();
  });

  it('a quarter of the replica’s time: after an export that took d (50 ms or more), the next waits 3d', () => {
    let t = 0;
    const bounds = new ExportBounds({ monotonic: () => t });
    const end = bounds.begin('a', 0);
    t = 2_000;
    end({ bytes: 10, expires: HOUR });
    t = 5_000;
    expect(refusal(() => bounds.begin('a', 0))).toMatchObject({ retryAfter: 3 });
    expect(refusal(() => bounds.begin('a', 0)).reason).toContain("a game's exports take at most 25% of this replica's time");
    t = 8_000;
    const next = bounds.begin('a', 0);
    // An ordinary export (a few milliseconds) leaves the next free at once; one of 50 ms does not.
    t = 8_049;
    next({ bytes: 10, expires: HOUR });
    const third = bounds.begin('a', 0);
    t = 8_099;
    third({ bytes: 10, expires: HOUR });
    expect(refusal(() => bounds.begin('a', 0))).toMatchObject({ retryAfter: 1 });
    t = 8_249;
    bounds.begin('a', 0)();
  });

  it('256 MiB kept at once per game: the next when the oldest expires', () => {
    const bounds = new ExportBounds({ monotonic: () => 0, bytes: 100 });
    bounds.begin('a', 0)({ bytes: 60, expires: HOUR });
    bounds.begin('a', 1_000)({ bytes: 60, expires: HOUR + 1_000 });
    const refused = refusal(() => bounds.begin('a', 10_000));
    expect(refused.retryAfter).toBe((HOUR - 10_000) / 1000);
    expect(refused.reason).toContain('this game keeps 2 exports');
    // Another game keeps its own.
    bounds.begin('b', 10_000)({ bytes: 60, expires: HOUR });
    // The oldest expired, 60 bytes are kept: one more.
    bounds.begin('a', HOUR)({ bytes: 60, expires: 2 * HOUR });
    expect(refusal(() => bounds.begin('a', HOUR)).reason).toContain('this game keeps 2 exports');
  });

  it('1,000 exports kept at once per game, however small', () => {
    const bounds = new ExportBounds({ monotonic: () => 0, count: 3 });
    for (let i = 0; i < 3; i++) bounds.begin('a', i)({ bytes: 1, expires: HOUR + i });
    expect(refusal(() => bounds.begin('a', 5)).retryAfter).toBe(3600);
    bounds.begin('a', HOUR)();
  });

  it('the end of an export counts once', () => {
    let t = 0;
    const bounds = new ExportBounds({ monotonic: () => t, bytes: 100 });
    const end = bounds.begin('a', 0);
    end({ bytes: 60, expires: HOUR });
    end({ bytes: 60, expires: HOUR });
    end();
    t = 1;
    bounds.begin('a', 0)({ bytes: 30, expires: HOUR });
  });
});
