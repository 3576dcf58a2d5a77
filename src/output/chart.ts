// Charts for a terminal: a one-line sparkline and a small line chart with axes, drawn with block and box
// characters. Pure functions of the samples, so they render the same everywhere. Every loop here is bounded by the
// samples shown or by a fixed count, whatever the values: samples near ±1.8e308 must not overflow the arithmetic
// into Infinity (or NaN), and non-finite samples are left out.
import { maxOf, minOf } from './format.js';

const BLOCKS = '▁▂▃▄▅▆▇█';

export interface Scale {
  min: number;
  max: number;
}

/**
 * Where `v` sits between `min` and `max`, 0 to 1 (clamped), NaN for a non-finite sample. Halved first, so
 * `max - min` cannot overflow for finite bounds.
 */
export function position(v: number, min: number, max: number): number {
  const range = max / 2 - min / 2;
  if (!Number.isFinite(v) || !(range > 0)) return Number.isFinite(v) ? 0 : NaN;
  return Math.min(1, Math.max(0, (v / 2 - min / 2) / range));
}

/** The value a fraction `t` (0 to 1) of the way from `min` to `max`, finite for finite bounds. */
function between(min: number, max: number, t: number): number {
  return min * (1 - t) + max * t;
}

/**
 * One character per sample, the last `width` samples. Against a fixed scale (0 to 100%, 0 to the allocation) the
 * height itself says how full a resource is; without one, the samples' own range is used.
 */
export function sparkline(values: readonly number[], opts: { width?: number; scale?: Scale } = {}): string {
  const shown = opts.width !== undefined ? values.slice(Math.max(0, values.length - opts.width)) : values;
  if (shown.length === 0) return '';
  const min = opts.scale?.min ?? minOf(shown);
  const max = opts.scale?.max ?? maxOf(shown);
  return shown
    .map((v) => {
      const p = position(v, min, max);
      if (Number.isNaN(p)) return ' ';
      // Eight equal bins over the scale; the top value falls in the last.
      return BLOCKS[Math.min(BLOCKS.length - 1, Math.floor(p * BLOCKS.length))];
    })
    .join('');
}

/** The smallest of 1, 2, 2.5, 5 × 10^k that is at least `raw`. */
export function niceStep(raw: number): number {
  if (!(raw > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * power >= raw * (1 - 1e-9)) return m * power;
  return 10 * power;
}

/**
 * Axis bounds with round numbers on every one of `rows` rows that cover [min, max]. Terminates for any input:
 * a handful of candidate steps are tried, and when none is finite and covers the range (values near the ends of
 * the double range), the samples' own bounds are the axis.
 */
export function niceScale(min: number, max: number, rows: number): Scale & { step: number } {
  const intervals = Math.max(1, rows - 1);
  if (!Number.isFinite(min) || !Number.isFinite(max)) return { min: 0, max: intervals, step: 1 };
  if (min > max) [min, max] = [max, min];
  // A flat series still gets a visible band around it.
  const span = max - min > 0 ? max - min : Math.max(Math.abs(max) * 0.1, 1);
  let step = niceStep(span / intervals);
  // Each candidate is at least 1.25 times the last: 40 tries cover any finite span.
  for (let tries = 0; tries < 40 && Number.isFinite(step); tries++) {
    let lo = Math.floor(min / step) * step;
    if (min >= 0 && lo < 0) lo = 0;
    const hi = lo + step * intervals;
    if (Number.isFinite(lo) && Number.isFinite(hi) && hi >= max - step * 1e-9) return { min: lo, max: hi, step };
    step = niceStep(step * 1.000001);
  }
  let [lo, hi] = [min, max];
  if (!(hi > lo)) {
    // A flat series: the band above it, or below when above would overflow.
    const band = Math.max(Math.abs(min) * 0.1, 1);
    hi = min + band;
    if (!Number.isFinite(hi)) [lo, hi] = [min - band, max];
  }
  return { min: lo, max: hi, step: hi / intervals - lo / intervals };
}

export interface LineChartOptions {
  /** Rows of the plot, the axis not counted. */
  height: number;
  /** Total width in columns, labels included. */
  width: number;
  /** A fixed scale; by default round numbers around the samples. */
  scale?: Scale;
  /** A y-axis label from a value. */
  format: (value: number) => string;
  /** Text under the left and right ends of the x axis. */
  xLabels?: [left: string, right: string];
  /** Colours the line (not the axes). */
  paint?: (text: string) => string;
}

/**
 * A line chart, newest sample on the right:
 *
 *  40 ┤    ╭╮
 *  30 ┤╭──╯╰──
 *  20 ┤╯
 *     └───────
 *     30 samples  now
 */
export function lineChart(values: readonly number[], o: LineChartOptions): string[] {
  const height = Math.max(2, o.height);
  if (values.length === 0) return [];
  const provisional = o.scale ?? niceScale(minOf(values), maxOf(values), height);
  const labels = Array.from({ length: height }, (_, row) => o.format(between(provisional.min, provisional.max, row / (height - 1))));
  const labelWidth = maxOf(labels.map((l) => l.length), 0);
  const plotWidth = Math.max(1, o.width - labelWidth - 2);

  // Each sample takes up to 3 columns so a short series still reads as a line; a long one keeps its newest part.
  const shown = values.slice(Math.max(0, values.length - plotWidth));
  const stretch = Math.max(1, Math.min(3, Math.floor(plotWidth / shown.length)));
  const series = shown.flatMap((v) => Array<number>(stretch).fill(v));
  const { min, max } = provisional;
  // A non-finite sample has no row: it leaves a gap (-1).
  const rowOf = (v: number) => {
    const p = position(v, min, max);
    return Number.isNaN(p) ? -1 : Math.round(p * (height - 1));
  };

  const grid = Array.from({ length: height }, () => Array<string>(series.length).fill(' '));
  for (let x = 0; x < series.length; x++) {
    const y = rowOf(series[x]!);
    if (y < 0) continue;
    const before = x === 0 ? y : rowOf(series[x - 1]!);
    const prev = before < 0 ? y : before;
    if (y === prev) {
      grid[y]![x] = '─';
      continue;
    }
    // The line arrives from the left on the previous row and turns towards the new one.
    const up = y > prev;
    grid[prev]![x] = up ? '╯' : '╮';
    grid[y]![x] = up ? '╭' : '╰';
    for (let between = Math.min(y, prev) + 1; between < Math.max(y, prev); between++) grid[between]![x] = '│';
  }

  const color = o.paint ?? ((t: string) => t);
  const lines: string[] = [];
  for (let row = height - 1; row >= 0; row--) {
    const line = grid[row]!.join('').trimEnd();
    lines.push(`${labels[row]!.padStart(labelWidth)} ┤${line ? color(line) : ''}`);
  }
  lines.push(`${' '.repeat(labelWidth)} └${'─'.repeat(series.length)}`);
  if (o.xLabels) {
    const [left, right] = o.xLabels;
    const room = series.length + 1;
    const gap = Math.max(1, room - left.length - right.length);
    lines.push(`${' '.repeat(labelWidth)} ${left}${' '.repeat(gap)}${right}`);
  }
  return lines;
}
