// A store that does not answer is the service being unavailable, not an internal error: each store's failures that
// say so (a timeout, a lost connection, a directory it cannot write) become 503 STORE_UNAVAILABLE naming it. Wrapped
// once where the stores are opened, so every caller (routes, services, the blob store's index) sees the same.
import { EmulatorError } from '../errors.js';

/** What a store is called in answers and health: `database`, `bucket`, `data directory`. */
export type StoreName = 'database' | 'bucket' | 'data directory';

/** Why `err` means the store does not answer, in a few words; undefined for any other failure. */
export type Classifier = (err: unknown) => string | undefined;

export function storeUnavailable(store: StoreName, reason: string): EmulatorError {
  return new EmulatorError('STORE_UNAVAILABLE', { store, reason }, { unavailable: store }, { 'retry-after': '1' });
}

/** `target` with every method's failure that `classify` recognises turned into STORE_UNAVAILABLE naming `store`. */
export function reportUnavailable<T extends object>(target: T, store: StoreName, classify: Classifier): T {
  const translate = (err: unknown): unknown => {
    if (err instanceof EmulatorError) return err;
    const reason = classify(err);
    return reason === undefined ? err : storeUnavailable(store, reason);
  };
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(target, {
    get(obj, prop) {
      const value: unknown = Reflect.get(obj, prop, obj);
      if (typeof value !== 'function') return value;
      let fn = wrapped.get(prop);
      if (fn === undefined) {
        fn = (...args: unknown[]) => {
          let result: unknown;
          try {
            result = (value as (...a: unknown[]) => unknown).apply(obj, args);
          } catch (err) {
            throw translate(err);
          }
          return result instanceof Promise ? result.catch((err: unknown) => Promise.reject(translate(err))) : result;
        };
        wrapped.set(prop, fn);
      }
      return fn;
    },
  });
}

const codeOf = (err: unknown): string => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
};
const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);

/**
 * PostgreSQL: a query or connection past the bound (the client's query_timeout, the server's statement_timeout, the
 * pool's connection timeout), a connection lost or refused, a server shutting down, a database that is gone.
 */
export const postgresUnavailable: Classifier = (err) => {
  const code = codeOf(err);
  const message = messageOf(err);
  if (/timeout/i.test(message) || code === '57014') return 'no answer in time';
  if (NETWORK_CODES.has(code) || /^(08|57P)/.test(code) || code === '53300' || code === '3D000' || /Connection terminated|not queryable|Client has encountered a connection error/i.test(message))
    return message || code;
  return undefined;
};

/** SQLite: its file cannot be written or read, or its lock is held past the busy timeout. */
export const sqliteUnavailable: Classifier = (err) => {
  const code = codeOf(err);
  if (/^SQLITE_(READONLY|CANTOPEN|IOERR|FULL|PERM|BUSY|LOCKED|CORRUPT|NOTADB)/.test(code)) return `${messageOf(err) || code} (${code})`;
  return undefined;
};

const FS_CODES = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'EDQUOT', 'EIO', 'ENOTDIR', 'EEXIST', 'ELOOP']);

/** Files in the data directory: it cannot be written (rights, a read-only or full disk, a file in a directory's place). */
export const filesUnavailable: Classifier = (err) => {
  const code = codeOf(err);
  return FS_CODES.has(code) ? `${messageOf(err)}; the emulator must be able to read and write there` : undefined;
};
