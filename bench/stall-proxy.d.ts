export interface StallProxy {
  /** host:port to connect to instead of the target. */
  host: string;
  port: number;
  /** From now on nothing is forwarded either way (what arrives is held); new connections are accepted and held too. */
  stall(): void;
  /** Forwards what was held, and everything after. */
  resume(): void;
  close(): Promise<void>;
}
export function stallProxy(targetHost: string, targetPort: number): Promise<StallProxy>;
