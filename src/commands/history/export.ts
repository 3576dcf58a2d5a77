import fs from 'node:fs';
import path from 'node:path';
import type { Context } from '../../context.js';
import { exportLobbyHistory } from '../../api/operations.js';
import { openPresignedGet } from '../../api/presigned.js';
import { toNetworkError } from '../../api/client.js';
import { UsageError } from '../../errors.js';
import { writeJson } from '../../output/json.js';
import { formatBytes } from '../../output/format.js';
import { CsvRecordCounter } from '../../output/csv.js';
import { parseDuration, parseTime } from '../../timeparse.js';
import { describeFsError } from '../args.js';

export interface ExportOptions {
  queryStart: number;
  queryEnd: number;
  /** A file path (resolved), or '-' for stdout. */
  output: string;
}

function compact(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z').replace(/[-:]/g, '');
}

export function defaultOutputName(start: number, end: number): string {
  return `lobby-history-${compact(start)}-${compact(end)}.csv`;
}

export function parse(_args: string[], opts: Record<string, unknown>, ctx: Context): ExportOptions {
  const since = opts.since as string | undefined;
  const from = opts.from as string | undefined;
  if (since !== undefined && from !== undefined) throw new UsageError('give either --since or --from, not both');
  if (since === undefined && from === undefined) {
    throw new UsageError('a window is required: --since <duration> or --from <time>', 'e.g. --since 24h');
  }
  const end = opts.to !== undefined ? parseTime('--to', String(opts.to)) : ctx.now();
  const start = since !== undefined ? end - parseDuration('--since', since) : parseTime('--from', from!);
  if (start < 0) throw new UsageError('--since reaches before 1970');
  if (start >= end) throw new UsageError('--from must be before --to');
  const output = opts.output === undefined ? defaultOutputName(start, end) : String(opts.output);
  if (output === '-' && ctx.global.json) throw new UsageError('--json prints a summary on stdout: give -o <file>, not -o -');
  return { queryStart: start, queryEnd: end, output: output === '-' ? '-' : path.resolve(ctx.cwd, output) };
}

export async function run(ctx: Context, o: ExportOptions): Promise<void> {
  if (o.output !== '-') {
    const dir = path.dirname(o.output);
    if (!fs.existsSync(dir)) throw new UsageError(`-o: directory ${dir} does not exist`);
  }
  const api = await ctx.api();
  const { url } = await exportLobbyHistory(api, { query_start: o.queryStart, query_end: o.queryEnd });
  const res = await openPresignedGet(ctx, api.dispatcher, url);
  const counter = new CsvRecordCounter();
  let bytes = 0;

  if (o.output === '-') {
    try {
      for await (const chunk of res.body) {
        counter.push(chunk);
        bytes += chunk.length;
        if (!ctx.io.stdout.write(chunk)) await new Promise((r) => ctx.io.stdout.once('drain', r));
      }
    } catch (err) {
      throw ctx.signal.aborted ? ctx.signal.reason : toNetworkError(err, new URL(url));
    }
  } else {
    // Written beside the target and renamed into place, so an interrupted download never leaves a half file.
    const temp = `${o.output}.${process.pid}.part`;
    const file = await fs.promises.open(temp, 'w').catch((err) => {
      throw new UsageError(`-o: cannot write ${o.output}: ${describeFsError(err)}`);
    });
    try {
      try {
        for await (const chunk of res.body) {
          counter.push(chunk);
          bytes += chunk.length;
          await file.write(chunk);
        }
      } catch (err) {
        throw ctx.signal.aborted ? ctx.signal.reason : toNetworkError(err, new URL(url));
      }
      await file.close();
      await fs.promises.rename(temp, o.output);
    } catch (err) {
      await file.close().catch(() => {});
      await fs.promises.rm(temp, { force: true });
      throw err;
    }
  }

  const rows = Math.max(0, counter.records() - 1);
  if (ctx.global.json) {
    return writeJson(ctx, { url, query_start: o.queryStart, query_end: o.queryEnd, output: o.output, rows });
  }
  if (o.output !== '-') {
    ctx.info(`Wrote ${rows} lobb${rows === 1 ? 'y' : 'ies'} (${formatBytes(bytes)}) to ${path.relative(ctx.cwd, o.output) || o.output}`);
  }
}
