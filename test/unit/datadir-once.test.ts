// The files a data directory makes once, whichever of concurrent processes gets there first: the secret and the
// replica id. Each is made on first use, read back the same after, and a corrupt one is one line saying what to do.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { dataDirReplicaId, loadSecret } from '../../src/emulator/datadir.js';
import { tempDir } from '../helpers/cli.js';

describe('files a data directory makes once', () => {
  it('the secret: 32 random bytes made on first use, the same after; a longer file is refused as corrupt', () => {
    const file = path.join(tempDir(), 'secret');
    const first = loadSecret(file);
    expect(first).toHaveLength(32);
    expect(loadSecret(file).equals(first)).toBe(true);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    fs.writeFileSync(file, Buffer.alloc(40, 1));
    expect(() => loadSecret(file)).toThrow(`Emulator secret ${file} is corrupt (40 bytes); delete it to make a new one.`);
  });

  it('the replica id: r- and 12 hex digits made on first use (the directory too), the same after; a name written by hand is kept', () => {
    const dir = path.join(tempDir(), 'data');
    const id = dataDirReplicaId(dir);
    expect(id).toMatch(/^r-[0-9a-f]{12}$/);
    expect(dataDirReplicaId(dir)).toBe(id);
    fs.writeFileSync(path.join(dir, 'replica'), 'staging-1\n');
    expect(dataDirReplicaId(dir)).toBe('staging-1');
  });
});
