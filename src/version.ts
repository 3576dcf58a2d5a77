import { packageVersion } from './shared/package-root.js';

// Read from package.json at run time so the version has one source.
export const version: string = packageVersion();
