// What one client can make a listener hold in memory by sending JSON bodies slowly: every route reads its body whole
// before answering (find and join before their token, as the service checks), so without a bound, thousands of
// connections each declaring 1 MiB and sending most of it could hold gigabytes until Node's request timeout (300 s).
// Each body counts its declared length against its client's share and the listener's while it is received, and must
// arrive within a time that grows with its length; what does not fit is refused before it is read.

/** Bytes of JSON bodies one client address may have in flight at once (eight bodies of the 1 MiB maximum). */
export const BODY_BYTES_PER_ADDRESS = 8 * 1024 * 1024;
/** Bytes of JSON bodies a listener receives at once, from every client together. */
export const BODY_BYTES_TOTAL = 64 * 1024 * 1024;

/** How long a body of `length` bytes may take to arrive once its headers have: 10 s, and 1 s per 64 KiB (26 s for 1 MiB). */
export function bodyDeadlineMs(length: number): number {
  return 10_000 + Math.ceil(length / 65_536) * 1_000;
}

/** The bytes of bodies being received, per address and in all, and how long each may take. */
export class BodyBudget {
  private readonly byAddress = new Map<string, number>();
  private total = 0;
  readonly perAddress: number;
  private readonly inAll: number;
  readonly deadlineMs: (length: number) => number;

  constructor(bounds: { perAddress?: number; total?: number; deadlineMs?: (length: number) => number } = {}) {
    this.perAddress = bounds.perAddress ?? BODY_BYTES_PER_ADDRESS;
    this.inAll = bounds.total ?? BODY_BYTES_TOTAL;
    this.deadlineMs = bounds.deadlineMs ?? bodyDeadlineMs;
  }

  /**
   * Counts `length` bytes for `address` until the returned release is called (once; later calls do nothing); or
   * answers which bound it would pass, counting nothing.
   */
  take(address: string, length: number): (() => void) | 'address' | 'total' {
    const held = this.byAddress.get(address) ?? 0;
    if (held + length > this.perAddress) return 'address';
    if (this.total + length > this.inAll) return 'total';
    this.byAddress.set(address, held + length);
    this.total += length;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= length;
      const left = this.byAddress.get(address)! - length;
      if (left === 0) this.byAddress.delete(address);
      else this.byAddress.set(address, left);
    };
  }
}
