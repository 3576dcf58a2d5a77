export interface StallProxy {
  /** host:port to connect to instead of the target. */
  host: string;
  port: number;
  /** From now on nothing is forwarded either way (what arrives is held); new connections are accepted and held too. */
  stall(): void;
  /** Forwards what was held, and everything after. */
  resume(): void;
  /** Ends every connection open now, both ways; new ones are accepted as before. */
  drop(): void;
  /** Requests seen so far whose first line matches (a plain-HTTP target): e.g. /\/stats/. */
  requests(pattern: RegExp): number;
  close(): Promise<void>;
}

/** A proxy to targetHost:targetPort, or to the unix socket at targetHost when no port is given. */
export function stallProxy(targetHost: string, targetPort?: number): Promise<StallProxy>;
