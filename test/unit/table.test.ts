// The table renderer: a screenful through cli-table3, more streamed at fixed widths, the same text either way; ids
// kept whole while other columns shrink or drop.
import { describe, expect, it } from 'vitest';
import { fitWidths, formatTable, tableChunks, type TableSpec } from '../../src/output/table.js';
import { reformatJson } from '../../src/output/json.js';
import { plain } from '../helpers/cli.js';

const layout = (columns: number) => ({ tty: true, columns, color: true });
const render = (spec: TableSpec, columns: number, screenful?: number) => [...tableChunks(spec, layout(columns), screenful)].join('');

function spec(rows: number): TableSpec {
  return {
    head: ['ID', 'NAME', 'REGION', 'N', 'NOTE'],
    rows: Array.from({ length: rows }, (_, i) => [
      `${String(i).padStart(8, '0')}-0000-4000-8000-000000000000`,
      ['short', 'a much longer name than most', '東京 server', 'x\x1b[31mred\ttab'][i % 4]!,
      ['lnd-atl', 'lnd-fra'][i % 2]!,
      i * 37,
      i % 3 ? '' : 'a note that goes on for a while',
    ]),
    right: [3],
    keep: [0],
    shrink: [1, 4],
    drop: [4, 2],
  };
}

describe('tables', () => {
  it.each([40, 60, 80, 120])('the streamed renderer writes what cli-table3 lays out, at %i columns', (columns) => {
    const s = spec(40);
    // screenful 1000: all through cli-table3; 0: all streamed.
    expect(render(s, columns, 0)).toBe(render(s, columns, 1000));
  });

  it('an id is never cut: other columns shrink, then drop in the stated order, and a note says so', () => {
    const text = plain(render(spec(3), 60));
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID +NAME +REGION +N$/);
    expect(lines[1]).toMatch(/^00000000-0000-4000-8000-000000000000 +short +lnd-atl +0$/);
    expect(lines.at(-1)).toBe('NOTE left out to fit: --wide shows it');
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(59);
    // Narrower than the id itself: the id still whole, everything else gone.
    const tiny = plain(render(spec(2), 30)).split('\n');
    expect(tiny[1]).toMatch(/^00000000-0000-4000-8000-000000000000/);
  });

  it('a short column dropped early comes back when a wide one left after it makes the room, and nothing shrinks for it', () => {
    const s: TableSpec = {
      head: ['ID', 'STATE', 'NAME'],
      rows: [['00000000-0000-4000-8000-000000000000', 'uploading', 'a name far too long to sit beside the id at sixty']],
      keep: [0],
      shrink: [],
      drop: [1, 2],
    };
    const lines = plain(render(s, 60)).trimEnd().split('\n');
    expect(lines).toEqual([
      'ID                                    STATE',
      '00000000-0000-4000-8000-000000000000  uploading',
      'NAME left out to fit: --wide shows it',
    ]);
  });

  it('--wide: every column at full width, nothing left out', () => {
    const text = plain(formatTable(spec(3), { ...layout(40), wide: true }));
    expect(text).toContain('a much longer name than most');
    expect(text).toContain('a note that goes on for a while');
    expect(text).not.toContain('left out');
  });

  it('200,000 rows render in chunks, each row whole (bounded by construction: one pass per row)', () => {
    let rows = 0;
    let chunks = 0;
    for (const chunk of tableChunks(spec(200_000), layout(120))) {
      chunks++;
      rows += chunk.split('\n').length - 1;
    }
    expect(rows).toBe(200_001);
    expect(chunks).toBeGreaterThan(100);
  });

  it.each([[40, true], [120, true], [80, false]])('rows made on demand (length and at) render as the same rows in an array, at %i columns (terminal: %s)', (columns, tty) => {
    const s = spec(250);
    const made: number[] = [];
    const lazy: TableSpec = { ...s, rows: { length: s.rows.length, at: (i: number) => (made.push(i), s.rows.at(i)) } };
    const l = { tty, columns, color: true };
    expect([...tableChunks(lazy, l, 0)].join('')).toBe([...tableChunks(s, l, 0)].join(''));
    // Each row asked for when measured and when written (on a pipe, only when written): none held between.
    expect(made.length).toBe(tty ? 500 : 250);
  });

  it('fitWidths shrinks only the columns that may shrink', () => {
    expect(fitWidths([36, 30, 10], 60, [true, false, true])).toEqual([36, 10, 10]);
    expect(fitWidths([5, 10], 80)).toEqual([5, 10]);
  });
});

describe('reformatJson', () => {
  it('indents as JSON.stringify does, and keeps every digit of big integers', () => {
    const body = '{"a":1,"b":[1,2,{"c":"x,y:{}"}],"e":{},"f":[],"g":"q\\"uote","h":null,"i":true}';
    expect(reformatJson(body)).toBe(JSON.stringify(JSON.parse(body), null, 2));
    expect(reformatJson(' { "n" : 9007199254740993 , "m" : [ 9223372036854775807 ] } ', 0)).toBe('{"n":9007199254740993,"m":[9223372036854775807]}');
  });
});
