// Imports point one way, down this table, and never in a circle (type-only and dynamic imports count too): the
// shared leaves import nothing of src/; the emulator, a service of its own, imports only itself and them; the CLI's
// layers never import the commands nor the context that builds on them. docs/development.md says why.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { importCircles, layerViolations, type Layer } from '../helpers/layers.js';

const SRC = path.resolve(__dirname, '../../src');
const FIXTURE = path.resolve(__dirname, '../fixtures/layers');

const BELOW_COMMANDS = ['api', 'config', 'output', 'upload'];
const LAYERS: Layer[] = [
  { name: 'shared', holds: ['shared/'], may: ['shared'] },
  { name: 'emulator', holds: ['emulator/'], may: ['emulator', 'shared'] },
  // The CLI's own leaves; errors.ts names the emulator's failure codes to give each its exit code.
  { name: 'core', holds: ['base-context.ts', 'errors.ts', 'globals.ts', 'help.cts', 'stdout-failure.cts', 'timeparse.ts', 'uuid.ts', 'version.ts'], may: ['core', 'emulator', 'shared'] },
  ...BELOW_COMMANDS.map((name) => ({ name, holds: [`${name}/`], may: [...BELOW_COMMANDS, 'core', 'emulator', 'shared'] })),
  { name: 'context', holds: ['context.ts'], may: ['context', ...BELOW_COMMANDS, 'core', 'emulator', 'shared'] },
  { name: 'commands', holds: ['commands/'], may: ['commands', 'context', ...BELOW_COMMANDS, 'core', 'emulator', 'shared'] },
  { name: 'cli', holds: ['cli.ts'], may: ['cli', 'commands', 'context', ...BELOW_COMMANDS, 'core', 'emulator', 'shared'] },
];

describe('src/', () => {
  it('every file is in a layer, and imports only what its layer may', () => {
    expect(layerViolations(SRC, LAYERS)).toEqual([]);
  });

  it('no module below the commands imports from src/commands', () => {
    expect(layerViolations(SRC, LAYERS).filter((v) => v.endsWith('-> commands)'))).toEqual([]);
  });

  it('has no import circles', () => {
    expect(importCircles(SRC)).toEqual([]);
  });

  // The lobby service in rooms (issue 33): a file that outgrows this is doing a second job, to be given its own.
  it('no file of the emulator\'s services is over 300 lines', () => {
    const dir = path.join(SRC, 'emulator/services');
    const lines = readdirSync(dir).map((f) => [f, readFileSync(path.join(dir, f), 'utf8').split('\n').length - 1] as const);
    expect(lines.length).toBeGreaterThan(10);
    expect(lines.filter(([, n]) => n > 300)).toEqual([]);
  });
});

// The checker on a small tree that breaks each rule (test/fixtures/layers/), so that it cannot pass by seeing nothing.
describe('the checker', () => {
  it('reports upward imports (re-exports, type-only and dynamic ones too) and a file in no layer', () => {
    expect(layerViolations(FIXTURE, LAYERS).sort()).toEqual([
      'emulator/store.ts -> ../commands/run.js (emulator -> commands)',
      'emulator/store.ts -> ../upload/send.js (emulator -> upload)',
      'shared/upward.ts -> ../upload/send.js (shared -> upload)',
      'stray.ts is in no layer',
    ]);
  });

  it('reports a circle of a type-only and a dynamic import', () => {
    expect(importCircles(FIXTURE)).toEqual(['api/a.ts -> api/b.ts -> api/a.ts']);
  });
});
