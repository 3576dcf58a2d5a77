// Which build a lobby runs under `--run-build`, and the one line when there is none to run; where its container's
// emulator is, what it is held to, and which addresses are its.
import { describe, expect, it } from 'vitest';
import { pickBuild } from '../../src/emulator/runtime/builds.js';
import { containerLimits, isDockerDesktop, PIDS_LIMIT } from '../../src/emulator/runtime/docker.js';
import { inSubnet } from '../../src/emulator/routes/server.js';
import { LOBBY_TIER, lobbyEnvironment } from '../../src/emulator/services/environment.js';
import type { BuildRow, LobbyRow } from '../../src/emulator/stores/store.js';

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

// Newest first. The store's own lookups are the contract test's (store-contract.test.ts); these stand in for them.
const BUILDS = [build('game-server:v3', 0, 3), build('game-server:v2', 1, 2), build('game-server:v1', 1, 1)];
const storeOf = (builds: BuildRow[]) => ({
  getBuild: async (id: string) => builds.find((b) => b.build_id === id),
  buildTagged: async (gameId: string, tag: string) => builds.find((b) => b.game_id === gameId && b.image_tag === tag),
  newestCompleteBuild: async (gameId: string) => builds.find((b) => b.game_id === gameId && b.complete === 1),
});
const STORE = storeOf(BUILDS);

describe('pickBuild', () => {
  it('the newest complete build when no tag is given; an unfinished push is passed over', async () => {
    expect((await pickBuild(STORE, 'g', true)).image_tag).toBe('game-server:v2');
  });

  it('the build of the tag given, old or new', async () => {
    expect((await pickBuild(STORE, 'g', 'game-server:v1')).build_id).toBe('game-server:v1@1');
  });

  it("with no tag, the build the lobby's version names, old or new; one that is gone is said in one line", async () => {
    expect((await pickBuild(STORE, 'g', true, 'game-server:v1@1')).image_tag).toBe('game-server:v1');
    // A tag given runs for every lobby, whatever its version names.
    expect((await pickBuild(STORE, 'g', 'game-server:v2', 'game-server:v1@1')).image_tag).toBe('game-server:v2');
    await expect(pickBuild(STORE, 'g', true, 'game-server:v3@3')).rejects.toThrow("the build game-server:v3@3 that game g's version names is gone: deploy a version with a build the game has");
  });

  it('says in one line what to push when there is nothing to run', async () => {
    await expect(pickBuild(storeOf([]), 'g', true)).rejects.toThrow('game g has no complete build to run: push one with `gamehost build push <file> --tag <name:tag>`');
    await expect(pickBuild(STORE, 'g', 'game-server:v9')).rejects.toThrow('game g has no build tagged game-server:v9: push one with `gamehost build push <file> --tag game-server:v9`');
    await expect(pickBuild(STORE, 'g', 'game-server:v3')).rejects.toThrow('the build tagged game-server:v3 of game g is not complete yet: finish its push (`gamehost build push` resumes it)');
  });
});

describe('isDockerDesktop', () => {
  it("Linux's Docker Engine runs on this host; Docker Desktop (its VM, on Linux too) and any daemon off Linux do not", () => {
    expect(isDockerDesktop('linux', { OperatingSystem: 'Debian GNU/Linux 12 (bookworm)' })).toBe(false);
    expect(isDockerDesktop('linux', {})).toBe(false);
    expect(isDockerDesktop('linux', { OperatingSystem: 'Docker Desktop' })).toBe(true);
    expect(isDockerDesktop('darwin', { OperatingSystem: 'Docker Desktop' })).toBe(true);
    expect(isDockerDesktop('win32', {})).toBe(true);
  });
});

describe('containerLimits', () => {
  const MiB = 1024 * 1024;
  const LOBBY = { lobby_id: 'l', namespace_id: 'n', game_mode: 'default', region_id: 'lnd-atl', max_players: 8, tags: '{}', lobby_config: null, ports: '{}' } as unknown as LobbyRow;
  it("a lobby's container is held to what its environment says it has: basic-1d1's reservation, hard limit and CPU weight", () => {
    const env = lobbyEnvironment({ lobby: LOBBY, endpoint: 'http://e', token: 't', version: { versionId: 'v', versionName: '0.0.1', namespaceName: 'prod', env: {}, tier: 'basic-1d1', buildId: null } });
    expect(env.RIVET_MEMORY).toBe(String(1838 * MiB));
    expect(env.RIVET_MEMORY_OVERSUBSCRIBE).toBe(String(2757 * MiB));
    expect(containerLimits(env)).toEqual({ Memory: 2757 * MiB, MemorySwap: 2757 * MiB, MemoryReservation: 1838 * MiB, CpuShares: 100, PidsLimit: PIDS_LIMIT });
  });

  it('the default tier where the environment says nothing usable; shares clamped to 1..10,000; the hard limit never under the reservation', () => {
    expect(containerLimits({})).toMatchObject({ Memory: LOBBY_TIER.memoryMax, MemoryReservation: LOBBY_TIER.memory, CpuShares: 100 });
    expect(containerLimits({ RIVET_CPU: '5', RIVET_MEMORY: 'lots' })).toMatchObject({ CpuShares: 1, MemoryReservation: LOBBY_TIER.memory });
    expect(containerLimits({ RIVET_CPU: '1000000' }).CpuShares).toBe(10_000);
    expect(containerLimits({ RIVET_MEMORY: String(900 * MiB), RIVET_MEMORY_OVERSUBSCRIBE: String(100 * MiB) })).toMatchObject({ Memory: 900 * MiB, MemoryReservation: 900 * MiB });
  });
});

describe('inSubnet', () => {
  it('tells the containers\' addresses, as IPv4 or mapped into IPv6, from the rest', () => {
    expect(inSubnet('172.18.0.2', '172.18.0.0/16')).toBe(true);
    expect(inSubnet('::ffff:172.18.255.254', '172.18.0.0/16')).toBe(true);
    expect(inSubnet('172.19.0.2', '172.18.0.0/16')).toBe(false);
    expect(inSubnet('127.0.0.1', '172.18.0.0/16')).toBe(false);
    expect(inSubnet('::1', '172.18.0.0/16')).toBe(false);
    expect(inSubnet('192.168.16.7', '192.168.16.0/20')).toBe(true);
    expect(inSubnet('192.168.32.7', '192.168.16.0/20')).toBe(false);
    expect(inSubnet('10.1.2.3', '0.0.0.0/0')).toBe(true);
    expect(inSubnet('10.1.2.3', 'garbage')).toBe(false);
  });
});
