// `emulator builds` as a person reads it at 40, 80 and 120 columns: builds of one game differ at the end of their
// tags and names, so neither is ever cut; other columns are left out (and named) first, --wide shows them all.
import { describe, expect, it } from 'vitest';
import type { EmulatorBuild } from '../../src/api/types.js';
import { formatBuilds } from '../../src/output/views/build.js';
import { plain } from '../helpers/cli.js';

const golden = (lines: string[]) => lines.join('\n') + '\n';
const term = (columns: number, wide = false) => ({ tty: true, columns, now: 0, utc: true, color: true, wide });

const build = (n: number, over: Partial<EmulatorBuild>): EmulatorBuild => ({
  build_id: `0${n}a1b2c3-4d5e-4f60-8a7b-9c0d1e2f3a4b`,
  image_tag: `game-server:v${n}`,
  display_name: `game-server:v${n}`,
  kind: 'docker_image',
  compression: 'none',
  content_length: 3000,
  sha256: `${n}`.repeat(64),
  complete: true,
  create_ts: `2026-11-2${n}T10:00:00.000Z`,
  ...over,
});

// Three builds whose tags and names differ only past 20 characters, the case that used to read `game-…` on each row.
const builds = [
  build(3, { image_tag: 'game-server:2026-11-23-rc3', display_name: 'game-server:2026-11-23-rc3', complete: false, sha256: null, content_length: 1_288_490_189 }),
  build(2, { image_tag: 'game-server:2026-11-22-rc2', display_name: 'Game server, release candidate 2 (hotfix)' }),
  build(1, { image_tag: 'game-server:2026-11-21-rc1', display_name: 'Game server, release candidate 1' }),
];

const AT_40 = golden([
  'BUILD                                 TAG',
  '03a1b2c3-4d5e-4f60-8a7b-9c0d1e2f3a4b  game-server:2026-11-23-rc3',
  '02a1b2c3-4d5e-4f60-8a7b-9c0d1e2f3a4b  game-server:2026-11-22-rc2',
  '01a1b2c3-4d5e-4f60-8a7b-9c0d1e2f3a4b  game-server:2026-11-21-rc1',
  '5 columns left out: --wide shows them',
]);

const AT_80 = golden([
  'BUILD                                 TAG                         STATE',
  '03a1b2c3-4d5e-4f60-8a7b-9c0d1e2f3a4b  game-server:2026-11-23-rc3  uploading',
  '02a1b2c3-4d5e-4f60-8a7b-9c0d1e2f3a4b  game-server:2026-11-22-rc2  complete',
  '01a1b2c3-4d5e-4f60-8a7b-9c0d1e2f3a4b  game-server:2026-11-21-rc1  complete',
  'NAME, SIZE, CREATED, SHA-256 left out to fit: --wide shows them',
]);

const AT_120 = golden([
  'BUILD                                 TAG                         NAME                                       STATE',
  '03a1b2c3-4d5e-4f60-8a7b-9c0d1e2f3a4b  game-server:2026-11-23-rc3  game-server:2026-11-23-rc3                 uploading',
  '02a1b2c3-4d5e-4f60-8a7b-9c0d1e2f3a4b  game-server:2026-11-22-rc2  Game server, release candidate 2 (hotfix)  complete',
  '01a1b2c3-4d5e-4f60-8a7b-9c0d1e2f3a4b  game-server:2026-11-21-rc1  Game server, release candidate 1           complete',
  'SIZE, CREATED, SHA-256 left out to fit: --wide shows them',
]);

describe('emulator builds at a terminal\'s width', () => {
  it.each([
    [40, AT_40],
    [80, AT_80],
    [120, AT_120],
  ])('at %i columns: ids and tags whole, names whole or left out, never cut', (columns, expected) => {
    const text = plain(formatBuilds(builds, term(columns)));
    expect(text).toBe(expected);
    expect(text).not.toContain('…');
  });

  it('--wide: every column at full width, whatever the terminal', () => {
    const text = plain(formatBuilds(builds, term(40, true)));
    expect(text.split('\n')[0]).toMatch(/^BUILD +TAG +NAME +SIZE +STATE +CREATED +SHA-256$/);
    expect(text).toContain('Game server, release candidate 2 (hotfix)  2.93 KiB  complete   2026-11-22 10:00:00 UTC  222222222222');
    expect(text).not.toContain('left out');
  });

  it('a tag wider than the terminal stays whole, as an id does', () => {
    const tag = `game-server:${'x'.repeat(100)}`;
    const text = plain(formatBuilds([build(1, { image_tag: tag })], term(80)));
    expect(text.split('\n')[1]).toBe(`01a1b2c3-4d5e-4f60-8a7b-9c0d1e2f3a4b  ${tag}`);
  });

  it('piped: every column, whole hash, size in bytes, RFC 3339 times', () => {
    const text = formatBuilds(builds.slice(2), { ...term(40), tty: false, color: false });
    expect(text).toBe(`01a1b2c3-4d5e-4f60-8a7b-9c0d1e2f3a4b\tgame-server:2026-11-21-rc1\tGame server, release candidate 1\t3000\tcomplete\t2026-11-21T10:00:00Z\t${'1'.repeat(64)}\n`);
  });
});
