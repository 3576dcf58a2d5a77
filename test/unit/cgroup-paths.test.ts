// Where a process's cgroups are, from /proc/self/cgroup and /proc/self/mountinfo as each kind of machine shows them:
// pure cgroup v2 (most users' Linux), a container's view of a subtree, v1 controllers beside a controller-less v2
// hierarchy (this project's CI), and the names the emulator gives its cgroups.
import { describe, expect, it } from 'vitest';
import { ownerOf, ownerPath, ownHierarchies } from '../../src/emulator/runtime/cgroup.js';

const V2_HOST_MOUNTS = '25 30 0:22 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n';

describe('the hierarchies a process is in', () => {
  it('pure v2: one hierarchy at /sys/fs/cgroup, the process\'s cgroup under it', () => {
    const own = '0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-term.scope\n';
    expect(ownHierarchies(own, V2_HOST_MOUNTS)).toEqual([
      { version: 2, controllers: [], dir: '/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/app-term.scope' },
    ]);
  });

  it('pure v2 as root in the root cgroup, and a container whose mount is its own subtree', () => {
    expect(ownHierarchies('0::/\n', V2_HOST_MOUNTS)).toEqual([{ version: 2, controllers: [], dir: '/sys/fs/cgroup' }]);
    // A container without a cgroup namespace: its mount is the subtree of its cgroup, mounted as the root.
    const mounts = '700 690 0:22 /docker/abc /sys/fs/cgroup ro,nosuid - cgroup2 cgroup2 rw\n';
    expect(ownHierarchies('0::/docker/abc/app\n', mounts)).toEqual([{ version: 2, controllers: [], dir: '/sys/fs/cgroup/app' }]);
    // A cgroup outside what is mounted is unreachable: left out.
    expect(ownHierarchies('0::/elsewhere\n', mounts)).toEqual([]);
  });

  it('v1 controllers beside a v2 hierarchy without controllers; combined controllers; named hierarchies left out', () => {
    const own = ['9:name=systemd:/', '8:pids:/', '6:freezer:/', '4:memory:/process_api/6d00', '2:cpu,cpuacct:/', '0::/'].join('\n');
    const mounts = [
      '31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
      '32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct',
      '35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
      '37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer',
      '39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids',
      '40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd',
      '41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
    ].join('\n');
    expect(ownHierarchies(own, mounts)).toEqual([
      { version: 1, controllers: ['pids'], dir: '/sys/fs/cgroup/pids' },
      { version: 1, controllers: ['freezer'], dir: '/sys/fs/cgroup/freezer' },
      { version: 1, controllers: ['memory'], dir: '/sys/fs/cgroup/memory/process_api/6d00' },
      { version: 1, controllers: ['cpu', 'cpuacct'], dir: '/sys/fs/cgroup/cpu,cpuacct' },
      { version: 2, controllers: [], dir: '/sys/fs/cgroup/unified' },
    ]);
  });

  it('a mount point with a space, as mountinfo escapes it', () => {
    expect(ownHierarchies('0::/a\n', '1 2 0:1 / /mnt/my\\040cgroups rw - cgroup2 none rw\n')).toEqual([{ version: 2, controllers: [], dir: '/mnt/my cgroups/a' }]);
  });
});

describe("the emulator's cgroup names", () => {
  it('gamehost/<replica>/<pid>-<start>, and back', () => {
    expect(ownerPath('staging-1', { pid: 4242, start: 1795826911744 })).toBe('gamehost/staging-1/4242-1795826911744');
    expect(ownerOf('4242-1795826911744')).toEqual({ pid: 4242, start: 1795826911744 });
    for (const name of ['probe', '4242', '-1', '1-2-3', '../1-2']) expect(ownerOf(name)).toBeUndefined();
  });
});
