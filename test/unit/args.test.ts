// The conversions of command-line values: one grammar for sizes wherever a size is given.
import { describe, expect, it } from 'vitest';
import { bytes, bytesPerSecond, integer, milliseconds, parseSize, timeoutMs } from '../../src/commands/args.js';

describe('sizes', () => {
  it.each([
    ['65536', 65536],
    ['20M', 20 * 1024 ** 2],
    ['20MiB', 20 * 1024 ** 2],
    ['20MB', 20 * 1024 ** 2],
    ['20m', 20 * 1024 ** 2],
    ['64KiB', 65536],
    ['64K', 65536],
    ['1.5G', 1.5 * 1024 ** 3],
    ['1GiB', 1024 ** 3],
    ['2T', 2 * 1024 ** 4],
    ['100 b', 100],
  ])('%s is %d bytes, in either spelling of the unit', (raw, value) => {
    expect(parseSize(raw)).toBe(value);
    expect(bytes(raw, '--part-size')).toBe(value);
    expect(bytesPerSecond(raw, '--limit-rate')).toBe(value);
  });

  it('a rate may end in /s', () => {
    expect(bytesPerSecond('20MiB/s', '--limit-rate')).toBe(20 * 1024 ** 2);
    expect(() => bytes('20MiB/s', '--part-size')).toThrow('--part-size must be a size in bytes');
  });

  it.each(['', '0', '0.5', '-1', 'big', '20X', '20 MiBs', '1e3', '99999999999T'])('refuses %j, naming the flag', (raw) => {
    expect(parseSize(raw)).toBeUndefined();
    expect(() => bytes(raw, '--part-size')).toThrow(`--part-size must be a size in bytes such as 65536, 64K, 64KiB or 1M, not "${raw}"`);
    expect(() => bytesPerSecond(raw, '--limit-rate')).toThrow(`--limit-rate must be bytes per second such as 500K, 20M or 20MiB, not "${raw}"`);
  });
});

describe('numbers and durations', () => {
  it('integer() checks its range and names the flag', () => {
    expect(integer({ min: 1, max: 64 })('8', '--concurrency')).toBe(8);
    expect(() => integer({ min: 1, max: 64 })('65', '--concurrency')).toThrow('--concurrency must be from 1 to 64, not 65');
    expect(() => integer()('eight', '--n')).toThrow('--n must be a whole number, not "eight"');
  });

  it('milliseconds() takes seconds from 0.1 to a day; timeoutMs() any positive number of seconds', () => {
    expect(milliseconds('0.5', '--interval')).toBe(500);
    expect(milliseconds('86400', '--interval')).toBe(86_400_000);
    expect(() => milliseconds('0.05', '--interval')).toThrow('--interval must be a number of seconds from 0.1 to 86400 (a day), not "0.05"');
    // Past Node's 32-bit timers (24.8 days), a timer fires at once with a warning: each look then came a millisecond
    // after the last, and every one printed a TimeoutOverflowWarning.
    expect(() => milliseconds('2200000', '--watch')).toThrow('--watch must be a number of seconds from 0.1 to 86400 (a day), not "2200000"');
    expect(() => milliseconds('86400.5', '--watch')).toThrow('from 0.1 to 86400');
    expect(timeoutMs('2.5', '--timeout')).toBe(2500);
    expect(() => timeoutMs('0', '--timeout')).toThrow('--timeout must be a positive number of seconds, not "0"');
    expect(() => timeoutMs('', '--timeout')).toThrow('--timeout must be a positive number of seconds');
  });
});
