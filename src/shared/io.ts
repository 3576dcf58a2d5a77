// The streams and environment every layer is handed: types only, so that naming them imports nothing.
import type { Readable, Writable } from 'node:stream';

export type Env = Record<string, string | undefined>;

export type OutStream = Writable & { isTTY?: boolean; columns?: number };
export type InStream = Readable & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };

export interface IOStreams {
  stdin: InStream;
  stdout: OutStream;
  stderr: OutStream;
}
