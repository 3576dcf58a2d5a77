// agents.ts loads two files from inside undici instead of the whole package. Paths inside a package are not its
// promise: its version is pinned, and these fail when an upgrade moves or changes what those files hold.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { UNDICI_FILES } from '../../src/api/agents.js';

const require = createRequire(import.meta.url);
const root = path.resolve(__dirname, '../..');

describe("undici's files that agents.ts loads", () => {
  it('undici is pinned to one exact version, the one installed', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const installed = JSON.parse(fs.readFileSync(path.join(path.dirname(require.resolve('undici/package.json')), 'package.json'), 'utf8')) as { version: string };
    expect(pkg.dependencies.undici).toMatch(/^\d+\.\d+\.\d+$/);
    expect(pkg.dependencies.undici).toBe(installed.version);
  });

  it('the Agent file holds the Agent the package exports, and the request file its request API', () => {
    const undici = require('undici') as typeof import('undici');
    expect(require(UNDICI_FILES.agent)).toBe(undici.Agent);
    expect(require(UNDICI_FILES.request)).toBe(undici.Dispatcher.prototype.request);
  });
});
