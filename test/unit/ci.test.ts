import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createContext } from '../../src/context.js';
import type { Env } from '../../src/shared/io.js';
import { DEFAULT_GLOBALS } from '../../src/globals.js';
import { canAnimate, isCI } from '../../src/output/ci.js';

describe('isCI', () => {
  it.each<[Env, boolean]>([
    [{}, false],
    [{ CI: 'true' }, true],
    [{ CI: '1' }, true],
    [{ CI: 'false' }, false],
    [{ CI: '0' }, false],
    [{ CI: '' }, false],
    [{ GITHUB_ACTIONS: 'true' }, true],
    [{ GITLAB_CI: 'true' }, true],
    [{ BUILDKITE: 'true' }, true],
    [{ CIRCLECI: 'true' }, true],
    [{ JENKINS_URL: 'https://jenkins.example/' }, true],
    [{ TF_BUILD: 'True' }, true],
    [{ TEAMCITY_VERSION: '2024.1' }, true],
    [{ TERM: 'xterm-256color', HOME: '/home/me' }, false],
  ])('%j → %s', (env, expected) => {
    expect(isCI(env)).toBe(expected);
  });
});

describe('canAnimate', () => {
  const ctx = (env: Env, tty: boolean, quiet = false) => {
    const stderr = Object.assign(new Writable({ write: (_c, _e, cb) => cb() }), { isTTY: tty });
    return createContext({ env, io: { stdin: new PassThrough(), stdout: stderr, stderr } }, { ...DEFAULT_GLOBALS, quiet });
  };
  it('only on a terminal stderr, outside CI, not quiet, not TERM=dumb', () => {
    expect(canAnimate(ctx({}, true))).toBe(true);
    expect(canAnimate(ctx({}, false))).toBe(false);
    expect(canAnimate(ctx({ CI: 'true' }, true))).toBe(false);
    expect(canAnimate(ctx({ GITHUB_ACTIONS: 'true' }, true))).toBe(false);
    expect(canAnimate(ctx({ TERM: 'dumb' }, true))).toBe(false);
    expect(canAnimate(ctx({}, true, true))).toBe(false);
  });
});
