// CSV as the service writes it (RFC 4180: quoted fields may hold commas, quotes and newlines), read strictly:
// UTF-8 text, every record with the header's number of fields, every quote closed. Anything else is not the
// service's CSV (an HTML error page, a truncated file, binary), and saying so beats reporting wrong numbers.

/** Where and why a text is not CSV; `line` counts from 1. */
export class CsvError extends Error {
  constructor(
    readonly line: number,
    readonly problem: string,
  ) {
    super(`line ${line}: ${problem}`);
    this.name = 'CsvError';
  }
}

/**
 * Parses CSV as it arrives, chunk by chunk: quotes, doubled quotes, CRLF and multi-byte characters may all be
 * split across chunks. The first record is the header; each push returns the records it completed (the header
 * included), and throws a CsvError for a record whose field count differs from the header's. Empty lines are
 * skipped.
 */
export class CsvStreamParser {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private field = '';
  private row: string[] = [];
  private quoted = false;
  /** A quote seen inside a quoted field: either the close or the first half of `""`. */
  private quoteInQuoted = false;
  /** A record just ended on CR: an LF right after belongs to it. */
  private afterCR = false;
  /** Something of the current record was seen (so an unterminated last line still counts). */
  private started = false;
  /** The line being read, and the line the current record started on. */
  private line = 1;
  private recordLine = 1;
  private headerFields: number | undefined;

  /** The header's field count, once it has been read. */
  get fields(): number | undefined {
    return this.headerFields;
  }

  push(chunk: Uint8Array | string): string[][] {
    return this.scan(typeof chunk === 'string' ? chunk : this.decode(chunk, true));
  }

  /** Flushes the last record when the text did not end with a newline; throws if a quote was left open. */
  end(): string[][] {
    const records = this.scan(this.decode(new Uint8Array(0), false));
    if (this.quoted && !this.quoteInQuoted) throw new CsvError(this.recordLine, 'a quoted field is never closed');
    this.quoted = false;
    this.quoteInQuoted = false;
    if (this.started) this.finish(records);
    return records;
  }

  private decode(chunk: Uint8Array, stream: boolean): string {
    try {
      return this.decoder.decode(chunk, { stream });
    } catch {
      // The line of the first bad byte: what decodes before it, counted.
      const before = new TextDecoder().decode(chunk).split('\uFFFD')[0]!;
      throw new CsvError(this.line + (before.match(/\n/g)?.length ?? 0), 'not UTF-8 text');
    }
  }

  private finish(records: string[][]): void {
    this.row.push(this.field);
    const count = this.row.length;
    if (this.headerFields === undefined) this.headerFields = count;
    else if (count !== this.headerFields) {
      throw new CsvError(this.recordLine, `${count} field${count === 1 ? '' : 's'}, but the header has ${this.headerFields}`);
    }
    records.push(this.row);
    this.row = [];
    this.field = '';
    this.started = false;
  }

  private scan(text: string): string[][] {
    const records: string[][] = [];
    const n = text.length;
    let i = 0;
    // Runs of ordinary characters are sliced, not appended a character at a time: 50 MB exports are common.
    while (i < n) {
      if (this.afterCR) {
        this.afterCR = false;
        if (text[i] === '\n') {
          i++;
          continue;
        }
      }
      if (this.quoteInQuoted) {
        this.quoteInQuoted = false;
        if (text[i] === '"') {
          this.field += '"';
          i++;
          continue;
        }
        this.quoted = false;
      } else if (this.quoted) {
        const close = text.indexOf('"', i);
        const end = close < 0 ? n : close;
        for (let nl = text.indexOf('\n', i); nl >= 0 && nl < end; nl = text.indexOf('\n', nl + 1)) this.line++;
        this.field += text.slice(i, end);
        if (close < 0) break;
        this.quoteInQuoted = true;
        i = close + 1;
        continue;
      }
      if (!this.started && this.row.length === 0 && this.field === '') this.recordLine = this.line;
      SPECIAL.lastIndex = i;
      const special = SPECIAL.exec(text);
      const at = special ? special.index : n;
      if (at > i) {
        this.field += text.slice(i, at);
        this.started = true;
        i = at;
        if (!special) break;
      }
      const ch = text[i];
      if (ch === '"') {
        if (this.field !== '') throw new CsvError(this.line, 'a quote inside an unquoted field');
        this.quoted = true;
        this.started = true;
      } else if (ch === ',') {
        this.row.push(this.field);
        this.field = '';
        this.started = true;
      } else {
        this.line++;
        this.afterCR = ch === '\r';
        // An empty line is no record.
        if (this.started) this.finish(records);
      }
      i++;
    }
    return records;
  }
}

const SPECIAL = /[,\r\n"]/g;

/** One CSV record as RFC 4180 writes it: a field with a comma, a quote or a line break is quoted, quotes doubled. */
export function csvRecord(fields: readonly string[]): string {
  return fields.map((f) => (/[",\r\n]/.test(f) ? `"${f.replace(/"/g, '""')}"` : f)).join(',') + '\n';
}
