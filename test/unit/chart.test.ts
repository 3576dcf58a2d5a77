import { describe, expect, it } from 'vitest';
import { lineChart, niceScale, niceStep, sparkline } from '../../src/output/chart.js';

describe('sparkline', () => {
  it('draws each sample as one of eight blocks against a fixed scale', () => {
    expect(sparkline([0, 12.5, 25, 37.5, 50, 62.5, 75, 87.5, 100], { scale: { min: 0, max: 100 } })).toBe('▁▂▃▄▅▆▇██');
    // Against a full scale, a steady 30% reads as low, not as the top of its own range.
    expect(sparkline([30, 31, 30], { scale: { min: 0, max: 100 } })).toBe('▃▃▃');
  });

  it('without a scale uses the samples’ range; flat data stays on the floor', () => {
    expect(sparkline([1, 2, 3, 4])).toBe('▁▃▆█');
    expect(sparkline([5, 5, 5])).toBe('▁▁▁');
    expect(sparkline([])).toBe('');
  });

  it('keeps the newest samples when narrower than the series', () => {
    expect(sparkline([0, 0, 0, 100], { width: 2, scale: { min: 0, max: 100 } })).toBe('▁█');
  });
});

describe('niceScale', () => {
  it('picks round steps that cover the samples on every row', () => {
    expect(niceScale(18.2, 44.8, 5)).toEqual({ min: 10, max: 50, step: 10 });
    expect(niceScale(203.4, 259.3, 5)).toEqual({ min: 200, max: 280, step: 20 });
    expect(niceScale(0, 0, 3)).toEqual({ min: 0, max: 1, step: 0.5 });
    expect([niceStep(0.7), niceStep(3), niceStep(2.2), niceStep(12)]).toEqual([1, 5, 2.5, 20]);
  });
});

describe('niceScale at the ends of the double range', () => {
  it('terminates with finite bounds that cover the samples, for any finite input', () => {
    const M = Number.MAX_VALUE;
    for (const [min, max] of [[-M, M], [-1.79e308 / 2, 1.7e308], [0, M], [-M, -M], [M, M], [1e-320, 2e-320], [5, 5]] as [number, number][]) {
      const s = niceScale(min, max, 5);
      expect(Number.isFinite(s.min) && Number.isFinite(s.max) && Number.isFinite(s.step), `${min}..${max}`).toBe(true);
      expect(s.min <= min && s.max >= max, `${min}..${max}: ${s.min}..${s.max}`).toBe(true);
    }
  });

  it('a chart of samples near ±1.8e308 and non-finite ones draws finite labels, the non-finite left out', () => {
    const lines = lineChart([1.7e308, -1.79e308, Infinity, NaN, 0], { height: 5, width: 60, format: (v) => v.toExponential(1) });
    expect(lines.join('\n')).not.toMatch(/NaN|Infinity/);
    // A non-finite sample is a gap; the others are blocks.
    expect(sparkline([1.7e308, -1.79e308, Infinity, 0])).toMatch(/^[▁▂▃▄▅▆▇█]{2} [▁▂▃▄▅▆▇█]$/);
  });
});

describe('lineChart', () => {
  it('draws a line with a labelled y axis, an x axis and its end labels', () => {
    const lines = lineChart([1, 3, 2, 5, 4, 4, 0], { height: 4, width: 30, format: String, xLabels: ['7 samples', 'now'] });
    expect(lines.join('\n') + '\n').toBe(
      [
        '6 ┤         ╭──╮',
        '4 ┤   ╭──╮  │  ╰─────╮',
        '2 ┤───╯  ╰──╯        │',
        '0 ┤                  ╰──',
        '  └─────────────────────',
        '  7 samples          now',
        '',
      ].join('\n'),
    );
  });

  it('gives a flat series a band around it', () => {
    expect(lineChart([7, 7, 7], { height: 3, width: 20, format: String })).toEqual(['  8 ┤', '7.5 ┤', '  7 ┤─────────', '    └─────────']);
  });

  it('fits the width: a long series keeps its newest samples, one column each', () => {
    const values = Array.from({ length: 100 }, (_, i) => i);
    const lines = lineChart(values, { height: 3, width: 24, format: (v) => String(Math.round(v)), scale: { min: 0, max: 100 } });
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(24);
    expect(lines.at(-1)).toBe(`    └${'─'.repeat(19)}`);
  });

  it('colours only the line, so the axes and labels read the same without colour', () => {
    const lines = lineChart([1, 2], { height: 2, width: 10, format: String, paint: (t) => `<${t}>` });
    // Two samples stretch to three columns each on a seven-column plot.
    expect(lines).toEqual(['2 ┤<   ╭──>', '1 ┤<───╯>', '  └──────']);
  });
});
