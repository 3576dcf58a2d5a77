import fs from 'node:fs';
import path from 'node:path';
import { packageRoot } from './shared/package-root.js';

// Read from package.json at run time so the version has one source.
export const version: string = (JSON.parse(fs.readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
