// A full garbage collection on demand, for a long-running emulator that has gone idle. V8 shrinks its heap (the young
// generation back to its first size, the old generation's garbage gone and its free pages given back) only after a
// full collection, and it runs one only when the old generation reaches its limit: an emulator that ran a hundred
// lobby servers and then waits would keep what they grew for as long as it waits. Node has no call for it but the
// `gc` function `--expose-gc` defines, which a new context gets once the flag is set (the flag is read as a context
// is made, so it can be set while the process runs).
import v8 from 'node:v8';
import vm from 'node:vm';

type Gc = (options?: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;
let gc: Gc | null | undefined;

/** Collects all garbage now (about 10-60 ms here: see below); false where this V8 cannot. */
export function collectGarbage(): boolean {
  if (gc === undefined) {
    try {
      v8.setFlagsFromString('--expose-gc');
      const found: unknown = vm.runInNewContext('typeof gc === "function" ? gc : null');
      gc = typeof found === 'function' ? (found as Gc) : null;
    } catch {
      gc = null;
    }
  }
  if (gc === null) return false;
  // A full collection, then one as V8 makes when memory runs short (several rounds, compacting, the young
  // generation shrunk back: Node 24's V8). Node 20's knows no flavor, and given options collected a fraction of what
  // the plain call did (0.5 against 17 MB of garbage): there, the first is the one that counts.
  gc();
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  return true;
}

/**
 * Keeps V8's young generation at its first size from now on (its semi-spaces otherwise grow, up to 16 MiB each on
 * Node 20, under the allocation of running servers). Node 20's V8 gives that growth back on a full collection only
 * when its own measure of the allocation rate says so, which it did in some runs of the runtime bench and not in
 * others; Node 24's does on the last-resort collection above. Read by V8 each time it would grow, so it can be set
 * while the process runs; no change in the time a server takes to its ready (bench/runtime.js).
 */
export function keepYoungGenerationSmall(): void {
  v8.setFlagsFromString('--semi-space-growth-factor=1');
}
