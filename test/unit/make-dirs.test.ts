// mkdir -p a level at a time: the same as Node's recursive mkdir where a file system behaves, and an error, not an
// endless loop, where it answers ENOENT for a directory whose parent exists (procfs).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeDirsSync } from '../../src/shared/make-dirs.js';
import { tempDir } from '../helpers/cli.js';

const codeOf = (step: () => void): string | undefined => {
  try {
    step();
    return undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code;
  }
};

describe('makeDirsSync', () => {
  it('makes every missing level with the mode given, and leaves what exists', () => {
    const root = tempDir();
    const deep = path.join(root, 'a', 'b', 'c');
    makeDirsSync(deep);
    expect(fs.statSync(deep).isDirectory()).toBe(true);
    if (process.platform !== 'win32') expect(fs.statSync(path.join(root, 'a')).mode & 0o777).toBe(0o700);
    makeDirsSync(deep);
    makeDirsSync(root);
    expect(fs.readdirSync(path.join(root, 'a', 'b'))).toEqual(['c']);
  });

  it('a file in the way is an error: the file itself (EEXIST), or what is below it (ENOTDIR)', () => {
    const file = path.join(tempDir(), 'file');
    fs.writeFileSync(file, '');
    expect(codeOf(() => makeDirsSync(file))).toBe('EEXIST');
    expect(codeOf(() => makeDirsSync(path.join(file, 'sub', 'deeper')))).toBe('ENOTDIR');
  });

  it.skipIf(process.platform !== 'linux' || !fs.existsSync('/proc/self'))('a directory procfs cannot make is ENOENT at once (Node\'s recursive mkdir loops there for good)', () => {
    expect(codeOf(() => makeDirsSync('/proc/gamehost-test/data'))).toBe('ENOENT');
  });
});
