// A store that does not answer is the service being unavailable, not an internal error: each store's failures that
// say so (a timeout, a lost connection, a directory it cannot write) become 503 STORE_UNAVAILABLE naming it. Wrapped
// once where the stores are opened, so every caller (routes, services, the blob store's index) sees the same.
//
// The answer says what failed in a few words and a code, never where: a shared serve answers people it does not know,
// and a path, a database host or a bucket's key is the operator's to read. The whole error goes to the operator's
// log (serve's stderr): once per store and reason a minute, so an outage under load is a line, not one a request.
import { EmulatorError } from '../errors.js';
import { OncePerMinute, type OperatorLog } from '../operator-log.js';

/** What a store is called in answers and health: `database`, `bucket`, `data directory`. */
export type StoreName = 'database' | 'bucket' | 'data directory';

/** Why `err` means the store does not answer, in a few words a client may read; undefined for any other failure. */
export type Classifier = (err: unknown) => string | undefined;


export function storeUnavailable(store: StoreName, reason: string): EmulatorError {
  return new EmulatorError('STORE_UNAVAILABLE', { store, reason }, { unavailable: store }, { 'retry-after': '1' });
}

const codeOf = (err: unknown): string => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
};
const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** What tells the operator a store's whole error, given the reason its answer says. */
export type Tell = (store: StoreName, reason: string, err: unknown) => void;

/**
 * `log` told a store's whole error once per store and reason a minute (the errors of one outage differ by their
 * keys and queries: one of them stands for the rest).
 */
export function tellOperator(log: OperatorLog): Tell {
  const once = new OncePerMinute();
  return (store, reason, err) => {
    if (!once.due(`${store}: ${reason}`)) return;
    log(`the ${store} does not answer: ${messageOf(err) || codeOf(err) || reason}`);
  };
}

/**
 * `target` with every method's failure that `classify` recognises turned into STORE_UNAVAILABLE naming `store`, and
 * the whole error given to `tell` (see tellOperator).
 */
export function reportUnavailable<T extends object>(target: T, store: StoreName, classify: Classifier, tell: Tell): T {
  const translate = (err: unknown): unknown => {
    if (err instanceof EmulatorError) return err;
    const reason = classify(err);
    if (reason === undefined) return err;
    tell(store, reason, err);
    return storeUnavailable(store, reason);
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


/**
 * A failure in words a client may read: a system error's code and meaning without its path ("EACCES: permission
 * denied", of Node's "EACCES: permission denied, open '/srv/…'"), else its code alone.
 */
export function publicReason(err: unknown): string {
  const system = /^([A-Z][A-Z0-9_]*): ([^,'"/\\]*)/.exec(messageOf(err));
  if (system !== null) return `${system[1]}: ${system[2]!.trim()}`;
  return codeOf(err) || 'an unexpected failure';
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);

/**
 * PostgreSQL: a query or connection past the bound (the client's query_timeout, the server's statement_timeout, the
 * pool's connection timeout), a connection lost or refused, a server shutting down, a database that is gone.
 */
export const postgresUnavailable: Classifier = (err) => {
  const code = codeOf(err);
  const message = messageOf(err);
  if (/timeout/i.test(message) || code === '57014') return 'no answer in time';
  if (NETWORK_CODES.has(code)) return `the connection failed (${code})`;
  if (/^08/.test(code) || /Connection terminated|not queryable|Client has encountered a connection error/i.test(message)) return `the connection was lost${code ? ` (${code})` : ''}`;
  if (/^57P/.test(code)) return `the server is shutting down or starting (${code})`;
  if (code === '53300') return 'too many connections (53300)';
  if (code === '3D000') return 'the database does not exist (3D000)';
  return undefined;
};

/** SQLite: its file cannot be written or read, or its lock is held past the busy timeout. */
export const sqliteUnavailable: Classifier = (err) => {
  const code = codeOf(err);
  // SQLite's own messages ("database is locked") name no file.
  if (/^SQLITE_(READONLY|CANTOPEN|IOERR|FULL|PERM|BUSY|LOCKED|CORRUPT|NOTADB)/.test(code)) return `${messageOf(err) || code} (${code})`;
  return undefined;
};

const FS_CODES = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'EDQUOT', 'EIO', 'ENOTDIR', 'EEXIST', 'ELOOP']);

/** Files in the data directory: it cannot be written (rights, a read-only or full disk, a file in a directory's place). */
export const filesUnavailable: Classifier = (err) => {
  const code = codeOf(err);
  return FS_CODES.has(code) ? `${publicReason(err)}; the emulator must be able to read and write there` : undefined;
};
