import type { SpawnSyncReturns } from 'node:child_process';

export function packAndInstall(work: string): {
  packed: { files: { path: string }[]; filename: string };
  manifestAfter: string;
  install: SpawnSyncReturns<string>;
  installed: string;
  bin: string;
  cacheMiss?: string;
};
