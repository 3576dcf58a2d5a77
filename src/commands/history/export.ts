import fs from 'node:fs';
import path from 'node:path';
import type { Context } from '../../context.js';
import { exportLobbyHistory } from '../../api/operations.js';
import { InvalidAnswerError, UsageError, describeFsError } from '../../errors.js';
import { jsonLine, writeJson } from '../../output/json.js';
import type { HistoryRow } from '../../output/views/history.js';
import { defineCommand } from '../command.js';
import { makeDirsSync } from '../../shared/make-dirs.js';

export const FORMATS = ['csv', 'json', 'table'] as const;
export type ExportFormat = (typeof FORMATS)[number];

export interface ExportOptions {
  queryStart: number;
  queryEnd: number;
  /** A file path (resolved), or '-' for stdout. */
  output: string;
  /** -o named a directory with a trailing slash: made if missing. */
  makeDir?: boolean;
  /** csv: the bytes as served; json: JSON lines; table: rendered rows on stdout. */
  format: ExportFormat;
  /** Print the presigned URL and download nothing. */
  urlOnly: boolean;
  utc: boolean;
  /** --format table: every column at full width. */
  wide: boolean;
  /** Only the lobbies of these game modes (name ids or ids), of these regions (name ids or ids); none: all. */
  gameModes?: string[];
  regions?: string[];
}

/** Whether `record` is one the filters keep: each filter given names its name id or its id, in any case. */
function kept(o: ExportOptions, record: Record<string, string>): boolean {
  const matches = (wanted: string[] | undefined, ...fields: (string | undefined)[]) =>
    wanted === undefined || wanted.some((w) => fields.some((f) => f !== undefined && f !== '' && f.toLowerCase() === w.toLowerCase()));
  return matches(o.gameModes, record.lobby_group_name, record.lobby_group_id) && matches(o.regions, record.region_name, record.region_id);
}

/** Downloads at least this big get a progress line (on a terminal, outside CI). */
export const PROGRESS_MIN_BYTES = 1024 * 1024;

function compact(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z').replace(/[-:]/g, '');
}

export function defaultOutputName(start: number, end: number, format: ExportFormat = 'csv'): string {
  return `lobby-history-${compact(start)}-${compact(end)}.${format === 'json' ? 'jsonl' : 'csv'}`;
}

export default defineCommand({
  summary: 'Export the lobby history of a time window as CSV',
  options: [
    { flags: '--since <duration>', description: 'window ending now, e.g. 90m, 24h, 7d' },
    { flags: '--from <time>', description: 'window start: RFC 3339 or epoch ms' },
    { flags: '--to <time>', description: 'window end: RFC 3339 or epoch ms (default: now)' },
    { flags: '-o, --output <path>', description: 'where to write the rows: a file, a directory, or - for stdout (default: a file named after the window)' },
    { flags: '--format <format>', description: 'csv as served, json (JSON lines), or table (on stdout)', choices: FORMATS },
    { flags: '--url-only', description: 'print the presigned URL of the CSV and download nothing' },
    { flags: '--utc', description: 'show times in UTC instead of the local zone' },
    { flags: '--wide', description: 'with --format table: every column at full width, none left out' },
    { flags: '--game-mode <mode>', description: 'only lobbies of this game mode (its name, such as duos, or its id); repeatable', repeatable: true },
    { flags: '--region <region>', description: 'only lobbies in this region (its name id, such as lnd-fra, or its id); repeatable', repeatable: true },
  ],
  notes: 'With -q, prints the path of the file written alone.',
  examples: [
    'gamehost history export --since 7d --format table',
    'gamehost history export --from 2026-11-01T00:00:00Z --to 2026-11-08T00:00:00Z --game-mode duos --region lnd-fra -o week.csv',
    'gamehost history export --since 24h --format json -o - | jq .query_uptime_ms   # in CI',
  ],
  async parse(v, ctx): Promise<ExportOptions> {
    const { parseDuration, parseTime } = await import('../../timeparse.js');
    const { since, from, urlOnly, utc, wide } = v;
    const filters = { gameModes: nonEmpty('--game-mode', v.gameMode), regions: nonEmpty('--region', v.region) };
    if (urlOnly && (filters.gameModes || filters.regions)) throw new UsageError('--url-only downloads nothing, so there is nothing to filter: drop --game-mode and --region');
    if (since !== undefined && from !== undefined) throw new UsageError('give either --since or --from, not both');
    if (since === undefined && from === undefined) {
      throw new UsageError('a window is required: --since <duration> or --from <time>', 'e.g. --since 24h');
    }
    const end = v.to !== undefined ? parseTime('--to', v.to) : ctx.now();
    const start = since !== undefined ? end - parseDuration('--since', since) : parseTime('--from', from!);
    if (start < 0) throw new UsageError('--since reaches before 1970');
    // Without --to the window ends now: a --from after it names no --to that was given.
    if (start >= end) throw new UsageError(v.to !== undefined ? '--from must be before --to' : `--from must be in the past, not ${from}`);
    const format = v.format ?? 'csv';
    if (wide && format !== 'table') throw new UsageError('--wide goes with --format table');
    if (urlOnly) {
      if (v.output !== undefined) throw new UsageError('--url-only downloads nothing: drop -o');
      if (v.format !== undefined) throw new UsageError('--url-only downloads nothing: drop --format');
      return { queryStart: start, queryEnd: end, output: '-', format, urlOnly, utc, wide, ...filters };
    }
    if (format === 'table') {
      // A table is for reading, so it goes where it can be read; files get csv or json.
      if (v.output !== undefined && v.output !== '-') {
        throw new UsageError('--format table prints on stdout: drop -o', 'to keep the rows in a file, use --format csv or --format json');
      }
      if (ctx.global.json) throw new UsageError('--json prints a summary on stdout: --format table cannot print there too');
      return { queryStart: start, queryEnd: end, output: '-', format, urlOnly, utc, wide, ...filters };
    }
    const name = defaultOutputName(start, end, format);
    const output = v.output ?? name;
    if (output === '-' && ctx.global.json) throw new UsageError('--json prints a summary on stdout: give -o <file>, not -o -');
    const makeDir = /[\\/]$/.test(output);
    return { queryStart: start, queryEnd: end, output: output === '-' ? '-' : outputFile(path.resolve(ctx.cwd, output), output, name), makeDir, format, urlOnly, utc, wide, ...filters };
  },
  run,
});

/** A repeatable filter's values; undefined when not given; an empty value is a mistake. */
function nonEmpty(flag: string, values: string[] | undefined): string[] | undefined {
  if (values === undefined || values.length === 0) return undefined;
  if (values.some((w) => w.trim() === '')) throw new UsageError(`${flag} is empty`);
  return values.map((w) => w.trim());
}

/** `-o .`, `-o out/`: a directory (one that exists, or a name ending in a slash) gets the default name inside it. */
function outputFile(resolved: string, given: string, name: string): string {
  const isDir = /[\\/]$/.test(given) || fs.statSync(resolved, { throwIfNoEntry: false })?.isDirectory() === true;
  return isDir ? path.join(resolved, name) : resolved;
}

async function run(ctx: Context, o: ExportOptions): Promise<void> {
  const [{ openPresignedGet }, { checkServiceUrl, toNetworkError }, { TransferProgress, canRedraw }, { CsvError, CsvStreamParser, csvRecord }, { formatBytes, formatCount }, history, { viewOptions }, { stdoutSink, bufferedFileSink }] =
    await Promise.all([
      import('../../api/presigned.js'),
      import('../../api/transport.js'),
      import('../../upload/progress.js'),
      import('../../output/csv.js'),
      import('../../output/format.js'),
      import('../../output/views/history.js'),
      import('../../output/views/options.js'),
      import('../../output/file.js'),
    ]);
  const { HistoryTally, checkHistoryHeader, formatHistorySummary, historyTableChunks, historyJson, historyRecord, historyRow } = history;
  if (o.output !== '-') {
    const dir = path.dirname(o.output);
    // `-o exports/` names a directory that may not exist yet; `-o exports/week.csv` names a file in one that must.
    if (o.makeDir) {
      try {
        makeDirsSync(dir, 0o777);
      } catch (err) {
        throw new UsageError(`-o: cannot create directory ${dir}: ${describeFsError(err)}`);
      }
    } else if (!fs.existsSync(dir)) {
      throw new UsageError(`-o: directory ${dir} does not exist`, 'to have it made, end the name with a slash: -o dir/');
    }
  }
  const api = await ctx.api();
  // The embedded emulator ends with this command, and its links with it: a link it made is never handed out alone.
  const embedded = api.target.embedded;
  if (embedded && o.urlOnly) {
    throw new UsageError(
      '--url-only: the embedded emulator stops when this command ends, so its link would be dead by the time it is used',
      'run `gamehost emulator serve` and pass its --endpoint (its links last an hour), or download with -o <file>',
    );
  }
  const window = { query_start: o.queryStart, query_end: o.queryEnd };
  const { url } = await exportLobbyHistory(api, window);
  const link = checkServiceUrl('export url', url);
  if (o.urlOnly) {
    if (ctx.global.json) return writeJson(ctx, { url, ...window });
    ctx.io.stdout.write(url + '\n');
    return;
  }

  const res = await openPresignedGet(ctx, api, link);
  const length = Number(res.headers['content-length']);
  const total = Number.isFinite(length) && length > 0 ? length : undefined;
  // The upload's progress display, on a terminal for a download worth watching; nothing in pipes, CI or --quiet.
  const progress = new TransferProgress(ctx, canRedraw(ctx) && (total ?? 0) >= PROGRESS_MIN_BYTES ? 'tty' : 'none');
  await progress.open();
  progress.start({ file: o.output, total }, 'downloading');
  const sink = o.format === 'table' ? undefined : o.output === '-' ? stdoutSink(ctx.io.stdout) : await bufferedFileSink(o.output, '-o');
  const parser = new CsvStreamParser();
  const tally = new HistoryTally();
  const tableRows: HistoryRow[] = [];
  let header: string[] | undefined;
  let rows = 0;
  let received = 0;
  let written = 0;

  const write = async (data: string | Uint8Array) => {
    written += typeof data === 'string' ? Buffer.byteLength(data) : data.length;
    await sink!.write(data);
  };
  // Filtered, the CSV is written record by record (the header, then the lobbies kept); else as served, byte for byte.
  const filtered = o.gameModes !== undefined || o.regions !== undefined;
  // Each filter's values that named a lobby of the window, and the names the window's lobbies have: a value that
  // names none (a typo, most likely) is said, rather than left to look like an empty window.
  const named = new Set<string>();
  const modes = new Set<string>();
  const regions = new Set<string>();
  const note = (flag: string, wanted: string[] | undefined, names: Set<string>, ...fields: (string | undefined)[]) => {
    if (fields[0]) names.add(fields[0]);
    for (const w of wanted ?? []) if (fields.some((f) => f !== undefined && f !== '' && f.toLowerCase() === w.toLowerCase())) named.add(`${flag} ${w}`);
  };
  let inWindow = 0;
  const take = async (records: string[][]) => {
    for (const fields of records) {
      if (!header) {
        checkHistoryHeader(fields);
        header = fields;
        if (filtered && o.format === 'csv') await write(csvRecord(fields));
        continue;
      }
      const record = historyRecord(header, fields);
      if (filtered) {
        inWindow++;
        note('--game-mode', o.gameModes, modes, record.lobby_group_name, record.lobby_group_id);
        note('--region', o.regions, regions, record.region_name, record.region_id);
      }
      if (filtered && !kept(o, record)) continue;
      rows++;
      if (filtered && o.format === 'csv') await write(csvRecord(fields));
      tally.add(record);
      if (o.format === 'json') await write(jsonLine(historyJson(record)));
      else if (o.format === 'table') tableRows.push(historyRow(record));
    }
  };

  try {
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        received += chunk.length;
        progress.add(chunk.length);
        // Parsed before it is written: bytes that are not the service's CSV never reach stdout.
        await take(parser.push(chunk));
        if (o.format === 'csv' && !filtered) await write(chunk);
      }
      await take(parser.end());
      // The service writes the header with the first record: a window without lobbies is a 0-byte file.
      if (!header && received > 0) throw new CsvError(1, 'no header, only empty lines');
    } catch (err) {
      if (err instanceof CsvError) {
        throw new InvalidAnswerError(`the export is not the service's lobby history CSV: ${err.message}`, 'nothing was kept; export again, and if it persists the service is at fault');
      }
      if (err instanceof UsageError) throw err;
      throw ctx.signal.aborted ? ctx.signal.reason : toNetworkError(err, link);
    } finally {
      progress.stop();
    }
    await sink?.commit();
  } catch (err) {
    await sink?.abort();
    throw err;
  }

  const misses = [['--game-mode', o.gameModes, modes] as const, ['--region', o.regions, regions] as const].flatMap(([flag, wanted, names]) =>
    (wanted ?? []).filter((w) => !named.has(`${flag} ${w}`)).map((w) => ({ flag, w, names })),
  );
  if (misses.length > 0) {
    const { sanitizeLine } = await import('../../output/sanitize.js');
    for (const { flag, w, names } of misses) {
      const list = [...names].sort().slice(0, 10).map(sanitizeLine).join(', ');
      ctx.warn(`${flag} ${sanitizeLine(w)} names none of the ${formatCount(inWindow)} lobb${inWindow === 1 ? 'y' : 'ies'} of this window${names.size ? ` (theirs: ${list}${names.size > 10 ? ', …' : ''})` : ''}`);
    }
  }
  if (o.format === 'table') {
    const out = stdoutSink(ctx.io.stdout);
    for (const chunk of historyTableChunks(tableRows, { ...viewOptions(ctx, ctx.io.stdout, o.utc), wide: o.wide })) await out.write(chunk);
  }
  const summary = tally.summary();
  if (ctx.global.json) {
    if (embedded) ctx.warn('the url is the embedded emulator\'s, dead now that this command ends; `gamehost emulator serve` makes links that last');
    return writeJson(ctx, { url, ...window, output: o.output, format: o.format, rows, bytes: written, summary });
  }
  // -q: the one thing a script wants, the file written.
  if (ctx.global.quiet) {
    if (o.output !== '-') ctx.io.stdout.write(o.output + '\n');
    return;
  }
  if (o.output !== '-') {
    // Relative to here when below here; /dev/stdout stays /dev/stdout, not ../../dev/stdout.
    const shown = path.relative(ctx.cwd, o.output);
    ctx.info(`Wrote ${formatCount(rows)} lobb${rows === 1 ? 'y' : 'ies'} (${formatBytes(written)}) to ${shown && !shown.startsWith('..') && !path.isAbsolute(shown) ? shown : o.output}`);
  }
  const text = formatHistorySummary(summary, { start: o.queryStart, end: o.queryEnd }, viewOptions(ctx, ctx.io.stderr, o.utc));
  ctx.info(text.replace(/\n$/, ''));
}
