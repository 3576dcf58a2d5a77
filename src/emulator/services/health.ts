// Whether this replica can serve: its store and its blob store each answer a trivial request within the bound
// (EmulatorConfig.storeTimeoutMs), so health answers within it too, whatever has stalled.
import type { EmulatorConfig } from '../config.js';
import type { BlobStore, Store } from '../stores/store.js';
import type { StoreName } from '../stores/unavailable.js';

export type HealthReport = { ok: true } | { ok: false; unavailable: StoreName; reason: string };

/** Resolves when `ping` does within `timeoutMs`; rejects with why not. */
async function answersInTime(ping: () => Promise<void>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([ping(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export class Health {
  constructor(private readonly deps: { store: Store; blobs: BlobStore; config: EmulatorConfig; names: { records: StoreName; bytes: StoreName } }) {}

  /** Asks both at once; names the records' store first when neither answers. */
  async check(): Promise<HealthReport> {
    const { store, blobs, config, names } = this.deps;
    const [records, bytes] = await Promise.allSettled([
      answersInTime(() => store.ping(), config.storeTimeoutMs),
      answersInTime(() => blobs.ping(), config.storeTimeoutMs),
    ]);
    if (records.status === 'rejected') return { ok: false, unavailable: names.records, reason: reasonOf(records.reason) };
    if (bytes.status === 'rejected') return { ok: false, unavailable: names.bytes, reason: reasonOf(bytes.reason) };
    return { ok: true };
  }
}

function reasonOf(err: unknown): string {
  // A store's STORE_UNAVAILABLE carries the reason itself.
  const params = (err as { params?: { reason?: unknown } } | null)?.params;
  if (typeof params?.reason === 'string') return params.reason;
  const message = err instanceof Error ? err.message : String(err);
  return message || (err as { code?: string })?.code || 'no answer';
}
