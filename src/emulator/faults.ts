// Fault injection, for tests and demos of the uploader: `put-error=0.1,put-reset=0.05,latency=50ms,rate-limit=0.05`
// (`seed=N` makes the dice repeatable). Failed PUTs answer 500, reset ones lose their connection mid-body,
// rate-limited API calls answer 429 with an HTTP-date Retry-After as production does; `assembly-delay=2s` makes
// each part of a completion's assembly take that much longer (an interrupted completion, on demand). The spec is
// parsed here; the router applies it to requests (routes/faults.ts), the builds service to assemblies.

export interface Faults {
  putError: number;
  putReset: number;
  rateLimit: number;
  latencyMs: number;
  /** Added to the assembly of each part by complete, while its claim is held. */
  assemblyDelayMs: number;
  random: () => number;
}

/** Parses the spec; throws an Error whose message names the bad entry. */
export function parseFaults(spec: string): Faults {
  const faults: Faults = { putError: 0, putReset: 0, rateLimit: 0, latencyMs: 0, assemblyDelayMs: 0, random: Math.random };
  for (const entry of spec.split(',').map((e) => e.trim()).filter(Boolean)) {
    const [name, value = ''] = entry.split('=', 2).map((s) => s.trim()) as [string, string?];
    const probability = () => {
      const p = Number(value);
      if (!/^\d*\.?\d+$/.test(value) || p < 0 || p > 1) throw new Error(`fault ${name} takes a probability from 0 to 1, not "${value}"`);
      return p;
    };
    const time = () => {
      const m = /^(\d+)(ms|s)?$/.exec(value);
      if (!m) throw new Error(`fault ${name} takes a time such as 50ms, not "${value}"`);
      return Number(m[1]) * (m[2] === 's' ? 1000 : 1);
    };
    switch (name) {
      case 'put-error':
        faults.putError = probability();
        break;
      case 'put-reset':
        faults.putReset = probability();
        break;
      case 'rate-limit':
        faults.rateLimit = probability();
        break;
      case 'latency':
        faults.latencyMs = time();
        break;
      case 'assembly-delay':
        faults.assemblyDelayMs = time();
        break;
      case 'seed': {
        if (!/^\d+$/.test(value)) throw new Error(`fault seed takes a whole number, not "${value}"`);
        faults.random = mulberry32(Number(value));
        break;
      }
      default:
        throw new Error(`unknown fault "${name}" (known: put-error, put-reset, rate-limit, latency, assembly-delay, seed)`);
    }
  }
  return faults;
}

/** mulberry32: small, fast, and the same sequence for the same seed everywhere (seeded faults, property tests). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
