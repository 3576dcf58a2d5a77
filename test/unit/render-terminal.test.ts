// Tables and records, the two renderers every view uses for server strings: sanitised and fitted in a terminal,
// tab-separated and whole in a pipe.
import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createContext } from '../../src/context.js';
import { DEFAULT_GLOBALS } from '../../src/globals.js';
import { renderRecord } from '../../src/output/record.js';
import { renderTable } from '../../src/output/table.js';

const stream = (isTTY: boolean, columns = 80) => Object.assign(new Writable({ write: (_c, _e, cb) => cb() }), { isTTY, columns });
const ctx = (tty: boolean, columns = 80) =>
  createContext({ env: {}, io: { stdin: new PassThrough(), stdout: stream(tty, columns), stderr: stream(tty, columns) } }, { ...DEFAULT_GLOBALS, color: false });

const hostile = 'map\x1b[2J\x1b]0;owned\x07\x9b6n\ttab\nline';
// eslint-disable-next-line no-control-regex
const ACTIVE = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

describe('renderTable', () => {
  it('in a terminal: sanitised, aligned, every line within the width', () => {
    const c = ctx(true, 30);
    const text = renderTable(c, { head: ['NAME', 'VALUE'], rows: [[hostile, 'a-rather-long-value-that-will-not-fit'], ['b', 2]] });
    expect(text).not.toMatch(ACTIVE);
    expect(text.split('\n')[1]).toMatch(/^map/);
    for (const line of text.split('\n')) expect(Array.from(line).length).toBeLessThan(30);
    expect(text).toContain('…');
  });
  it('piped: one tab-separated row each, cells sanitised and whole', () => {
    const c = ctx(false, 10);
    expect(renderTable(c, { head: ['NAME', 'VALUE'], rows: [[hostile, 'a-rather-long-value'], ['b', 2]] })).toBe('map6n tab line\ta-rather-long-value\nb\t2\n');
  });
});

describe('renderRecord', () => {
  it('sanitises values for people and for scripts', () => {
    const fields = [{ label: 'Region', key: 'region', value: hostile }];
    expect(renderRecord(ctx(false), fields)).toBe('region\tmap6n tab line\n');
    expect(renderRecord(ctx(true), fields)).toBe('Region  map6n tab line\n');
  });
});
