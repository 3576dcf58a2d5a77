// What one game's history exports may take of a replica, whatever `rateLimits` says. An export reads every lobby of
// its range, builds their CSV and keeps it for an hour, so one game's cloud token asking again and again could
// otherwise fill a shared host's disk with copies of its history and keep a replica busy building them. Counted per
// replica (each one's own exports): one at a time per game; a game's long exports at most a quarter of the replica's
// time (after one that took d of 50 ms or more, the next waits 3d; the milliseconds an ordinary export takes impose no
// wait, and the count below bounds how many of those there can be); and at most 1,000 exports and 256 MiB of CSV kept
// per game at once (the next when the oldest expires).
import { performance } from 'node:perf_hooks';
import { EmulatorError } from '../errors.js';

export const EXPORT_SHARE = 0.25;
/** An export shorter than this imposes no wait on the next. */
export const EXPORT_PACED_MS = 50;
export const EXPORT_BYTES_PER_GAME = 256 * 1024 * 1024;
export const EXPORTS_PER_GAME = 1000;

interface GameExports {
  making: boolean;
  /** On the monotonic clock: when the game's next export may start. */
  nextAt: number;
  /** The exports kept, oldest first: until when (the emulator's clock) and how many bytes. */
  kept: { expires: number; bytes: number }[];
  bytes: number;
}

const refuse = (reason: string, retryMs: number): never => {
  const seconds = Math.max(1, Math.ceil(retryMs / 1000));
  throw new EmulatorError('API_RATE_LIMIT', { reason }, { retry_after_ms: seconds * 1000 }, { 'retry-after': String(seconds) });
};

export class ExportBounds {
  private readonly games = new Map<string, GameExports>();
  private readonly share: number;
  private readonly bytes: number;
  private readonly count: number;
  private readonly monotonic: () => number;

  constructor(bounds: { share?: number; bytes?: number; count?: number; monotonic?: () => number } = {}) {
    this.share = bounds.share ?? EXPORT_SHARE;
    this.bytes = bounds.bytes ?? EXPORT_BYTES_PER_GAME;
    this.count = bounds.count ?? EXPORTS_PER_GAME;
    this.monotonic = bounds.monotonic ?? (() => performance.now());
  }

  /**
   * An export of `gameId` begins at `now` (the emulator's clock), or 429 API_RATE_LIMIT with Retry-After says when it
   * may. Answers what to call when it ends: with what it kept, or with nothing when it failed.
   */
  begin(gameId: string, now: number): (kept?: { bytes: number; expires: number }) => void {
    const started = this.monotonic();
    const game = this.games.get(gameId) ?? { making: false, nextAt: 0, kept: [], bytes: 0 };
    while (game.kept.length > 0 && game.kept[0]!.expires <= now) game.bytes -= game.kept.shift()!.bytes;
    if (game.making) refuse('an export of this game is being made; ask again when it is done.', 1000);
    if (started < game.nextAt) refuse(`a game's exports take at most ${this.share * 100}% of this replica's time; the next may start shortly.`, game.nextAt - started);
    if (game.bytes >= this.bytes || game.kept.length >= this.count)
      refuse(
        `this game keeps ${game.kept.length} exports (${(game.bytes / 1024 / 1024).toFixed(1)} MiB) made in the last hour, as many as it may; the next may be made when the oldest expires.`,
        game.kept[0]!.expires - now,
      );
    game.making = true;
    this.games.set(gameId, game);
    this.forgetIdle(started);
    let ended = false;
    return (kept) => {
      if (ended) return;
      ended = true;
      game.making = false;
      const end = this.monotonic();
      if (end - started >= EXPORT_PACED_MS) game.nextAt = end + (end - started) * (1 / this.share - 1);
      if (kept !== undefined) {
        game.kept.push(kept);
        game.bytes += kept.bytes;
      }
    };
  }

  /** Games with nothing kept, nothing being made and nothing to wait for are forgotten, once there are many. */
  private forgetIdle(now: number): void {
    if (this.games.size < 1000) return;
    for (const [id, game] of this.games) if (!game.making && game.kept.length === 0 && game.nextAt <= now) this.games.delete(id);
  }
}
