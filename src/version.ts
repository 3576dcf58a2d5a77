import { createRequire } from 'node:module';

// Read from package.json at run time so the version has one source.
export const version: string = (createRequire(import.meta.url)('../package.json') as { version: string }).version;
