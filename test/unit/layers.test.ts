// Imports point down: the layers below the commands (api, config, output, upload, emulator) never import a
// command module, so each can be used, tested and loaded without the command tree.
import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';

const SRC = path.resolve(__dirname, '../../src');
const BELOW = ['api', 'config', 'output', 'upload', 'emulator'];

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
}

it('no module below the commands imports from src/commands', () => {
  const upward: string[] = [];
  for (const layer of BELOW) {
    for (const file of files(path.join(SRC, layer))) {
      for (const m of fs.readFileSync(file, 'utf8').matchAll(/(?:from|import\()\s*'([^']+)'/g)) {
        const target = path.resolve(path.dirname(file), m[1]!);
        if (m[1]!.startsWith('.') && target.startsWith(path.join(SRC, 'commands') + path.sep)) upward.push(`${path.relative(SRC, file)} -> ${m[1]}`);
      }
    }
  }
  expect(upward).toEqual([]);
});
