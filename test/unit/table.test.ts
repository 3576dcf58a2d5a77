// The table renderer: a screenful through cli-table3, more streamed at fixed widths, the same text either way; ids
// kept whole while other columns shrink or drop.
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { fitWidths, formatTable, tableChunks, type TableSpec } from '../../src/output/table.js';
import { reformatJson } from '../../src/output/json.js';
import { fitLine, visibleWidth } from '../../src/output/format.js';
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

  // Names as players and studios write them: emoji sequences a terminal shows in two columns whatever their length
  // in code points (a family joined by ZWJ, a flag, a skin tone, a red heart with its variation selector).
  const EMOJI = ['team 👨\u200d👩\u200d👧 three', 'pride 🏳️\u200d🌈', 'thumbs 👍🏽 up', 'love ❤️ it', '東京 👍 ok'];
  const emojiSpec = (rows: number): TableSpec => ({
    head: ['ID', 'NAME', 'REGION'],
    rows: Array.from({ length: rows }, (_, i) => [`lobby-${i}`, EMOJI[i % EMOJI.length]!, 'lnd-atl']),
    keep: [0],
    shrink: [1],
  });

  it.each([24, 30, 80])('emoji sequences: the streamed renderer lays out what cli-table3 does, at %i columns', (columns) => {
    const s = emojiSpec(10);
    expect(render(s, columns, 0)).toBe(render(s, columns, 1000));
  });

  it('emoji sequences: every row starts its next column at the same screen column, cut or not', () => {
    for (const columns of [26, 80]) {
      const lines = plain(render(emojiSpec(10), columns, 0)).trimEnd().split('\n');
      // Where REGION starts on screen: the width, as a terminal shows it, of what comes before it.
      const starts = lines.map((l) => stringWidth(l.slice(0, l.lastIndexOf(l.startsWith('ID') ? 'REGION' : 'lnd-atl'))));
      expect(new Set(starts).size, lines.join('\n')).toBe(1);
    }
  });

  it('a cut never splits an emoji sequence, at any width, coloured or not: whole ones kept, then …', () => {
    const segments = (text: string) => [...new Intl.Segmenter().segment(text)].map((g) => g.segment);
    for (const name of EMOJI) {
      const whole = segments(name);
      for (let width = 1; width < stringWidth(name); width++) {
        for (const line of [name, `\x1b[1m${name}\x1b[22m`]) {
          const cut = fitLine(line, width);
          expect(stringWidth(cut), `${name} at ${width}`).toBeLessThanOrEqual(width);
          const kept = segments(plain(cut).replace(/…$/, ''));
          expect(kept, `${name} at ${width}`).toEqual(whole.slice(0, kept.length));
          // As much as fits: the next whole character would not.
          expect(stringWidth(plain(cut)) - 1 + stringWidth(whole[kept.length]!), `${name} at ${width}`).toBeGreaterThan(width - 1);
        }
      }
    }
  });

  it('visibleWidth measures as string-width does (cli-table3 lays out with it), on its own path or through it', () => {
    // Pieces a name or a colour code can be made of: ASCII, accents, wide scripts, symbols, emoji and their parts.
    const pieces = ['a', ' ', 'Z', 'é', 'e\u0301', '東', 'サ', '한', 'Ａ', '…', '✓', '✔', '❤', '\ufe0f', '\ufe0e', '\u200d',
      '\u200b', '👨', '👩', '🏽', '🇫', '🇷', '1', '#', '\u20e3', '©', '™', '🫠', '🏴', '\u{e0067}', 'ع', '\t', '\x07', '\u0085',
      '\x1b[31m', '\x1b[0m', '\x9b1m'];
    let seed = 42;
    const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let i = 0; i < 5000; i++) {
      let text = '';
      for (let n = 1 + next(8); n > 0; n--) text += pieces[next(pieces.length)];
      expect(visibleWidth(text), JSON.stringify(text)).toBe(stringWidth(text));
    }
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
