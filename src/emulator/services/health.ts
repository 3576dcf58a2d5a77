// Whether this replica can serve: its store and its blob store each answer a trivial request within the bound
// (EmulatorConfig.storeTimeoutMs), so health answers within it too, whatever has stalled.
import type { EmulatorConfig } from '../config.js';
import type { BlobStore, Store } from '../stores/store.js';
import { publicReason, type StoreName, type Tell } from '../stores/unavailable.js';

export type HealthReport = { ok: true } | { ok: false; unavailable: StoreName; reason: string };

class NoAnswer extends Error {}

/** Resolves when `ping` does within `timeoutMs`; rejects with why not. */
async function answersInTime(ping: () => Promise<void>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new NoAnswer(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([ping(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export class Health {
  constructor(
    private readonly deps: {
      store: Store;
      blobs: BlobStore;
      config: EmulatorConfig;
      names: { records: StoreName; bytes: StoreName };
      tell: Tell;
    },
  ) {}

  /** Asks both at once; names the records' store first when neither answers. */
  async check(): Promise<HealthReport> {
    const { store, blobs, config, names } = this.deps;
    const [records, bytes] = await Promise.allSettled([
      answersInTime(() => store.ping(), config.storeTimeoutMs),
      answersInTime(() => blobs.ping(), config.storeTimeoutMs),
    ]);
    if (records.status === 'rejected') return { ok: false, unavailable: names.records, reason: this.reasonOf(names.records, records.reason) };
    if (bytes.status === 'rejected') return { ok: false, unavailable: names.bytes, reason: this.reasonOf(names.bytes, bytes.reason) };
    return { ok: true };
  }

  /** Why, in words anyone may read (health needs no token): the whole error goes to the operator's log. */
  private reasonOf(store: StoreName, err: unknown): string {
    if (err instanceof NoAnswer) return err.message;
    // A store's STORE_UNAVAILABLE carries its reason in those words, and was told already.
    const params = (err as { params?: { reason?: unknown } } | null)?.params;
    if (typeof params?.reason === 'string') return params.reason;
    const reason = publicReason(err);
    this.deps.tell(store, reason, err);
    return reason;
  }
}
