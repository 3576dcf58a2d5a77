// Whether this replica can serve: its store and its bucket each answer a trivial request in time.
import type { BlobStore, Store } from '../stores/store.js';

const PING_TIMEOUT_MS = 3_000;

export type HealthReport = { ok: true } | { ok: false; unavailable: 'store' | 'bucket'; reason: string };

/** Resolves when `ping` does within the timeout; rejects with why not. */
async function answersInTime(ping: () => Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${PING_TIMEOUT_MS} ms`)), PING_TIMEOUT_MS);
  });
  try {
    await Promise.race([ping(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export class Health {
  constructor(private readonly deps: { store: Store; blobs: BlobStore }) {}

  /** Asks both at once; names the store first when neither answers. */
  async check(): Promise<HealthReport> {
    const [store, bucket] = await Promise.allSettled([
      answersInTime(() => this.deps.store.ping()),
      answersInTime(() => this.deps.blobs.ping()),
    ]);
    if (store.status === 'rejected') return { ok: false, unavailable: 'store', reason: reasonOf(store.reason) };
    if (bucket.status === 'rejected') return { ok: false, unavailable: 'bucket', reason: reasonOf(bucket.reason) };
    return { ok: true };
  }
}

function reasonOf(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message || (err as { code?: string })?.code || 'no answer';
}
