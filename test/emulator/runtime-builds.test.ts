// Which build a lobby runs under `--run-build`, and the one line when there is none to run; how its container
// reaches this host.
import { describe, expect, it } from 'vitest';
import { pickBuild } from '../../src/emulator/runtime/builds.js';
import { networkFor } from '../../src/emulator/runtime/docker.js';
import type { BuildRow } from '../../src/emulator/stores/store.js';

const build = (image_tag: string, complete: number, create_ts: number): BuildRow => ({
  build_id: `${image_tag}@${create_ts}`,
  game_id: 'g',
  upload_id: 'u',
  display_name: image_tag,
  image_tag,
  kind: 'docker_image',
  compression: 'none',
  path: 'image.tar',
  content_type: null,
  content_length: 1,
  sha256: complete ? 'x' : null,
  complete,
  create_ts,
  complete_ts: complete ? create_ts : null,
});

// Newest first, as the store lists them.
const BUILDS = [build('game-server:v3', 0, 3), build('game-server:v2', 1, 2), build('game-server:v1', 1, 1)];

describe('pickBuild', () => {
  it('the newest complete build when no tag is given; an unfinished push is passed over', () => {
    expect(pickBuild(BUILDS, 'g', true).image_tag).toBe('game-server:v2');
  });

  it('the build of the tag given, old or new', () => {
    expect(pickBuild(BUILDS, 'g', 'game-server:v1').build_id).toBe('game-server:v1@1');
  });

  it('says in one line what to push when there is nothing to run', () => {
    expect(() => pickBuild([], 'g', true)).toThrow('game g has no complete build to run: push one with `gamehost build push <file> --tag <name:tag>`');
    expect(() => pickBuild(BUILDS, 'g', 'game-server:v9')).toThrow('game g has no build tagged game-server:v9: push one with `gamehost build push <file> --tag game-server:v9`');
    expect(() => pickBuild(BUILDS, 'g', 'game-server:v3')).toThrow('the build tagged game-server:v3 of game g is not complete yet: finish its push (`gamehost build push` resumes it)');
  });
});

describe('networkFor', () => {
  it("the host's network on Linux's Docker Engine; published ports under Docker Desktop (its VM, on Linux too) and off Linux", () => {
    expect(networkFor('linux', { OperatingSystem: 'Debian GNU/Linux 12 (bookworm)' })).toBe('host');
    expect(networkFor('linux', {})).toBe('host');
    expect(networkFor('linux', { OperatingSystem: 'Docker Desktop' })).toBe('published');
    expect(networkFor('darwin', { OperatingSystem: 'Docker Desktop' })).toBe('published');
    expect(networkFor('win32', {})).toBe('published');
  });
});
