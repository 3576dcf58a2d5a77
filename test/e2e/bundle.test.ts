// What `npm run build` (scripts/build.js) makes of Kysely: one module in dist/, in place of a re-export of the
// package's 280, which each process that opens a store would load.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const BUNDLE = path.resolve(import.meta.dirname, '../../dist/emulator/stores/kysely.js');

describe('dist/emulator/stores/kysely.js', () => {
  it('is Kysely in one module: it imports nothing, and exports what the stores take from it', async () => {
    const text = fs.readFileSync(BUNDLE, 'utf8');
    expect(text).not.toMatch(/^\s*(import|export)\s[^;]*\bfrom\s*['"]/m);
    // (Its FileMigrationProvider imports the files a caller names; nothing here calls it.)
    expect(text).not.toMatch(/\b(import|require)\s*\(\s*['"]/);
    const kysely = (await import(pathToFileURL(BUNDLE).href)) as Record<string, unknown>;
    for (const name of ['Kysely', 'DummyDriver', 'sql', 'SqliteAdapter', 'SqliteQueryCompiler', 'PostgresAdapter', 'PostgresQueryCompiler', 'IdentifierNode', 'TableNode']) {
      expect(kysely[name], name).toBeDefined();
    }
  });
});
