// CSV as the service writes it (RFC 4180: quoted fields may hold commas, quotes and newlines).

/** Counts records in a CSV stream without holding it, aware of quoted newlines. */
export class CsvRecordCounter {
  private quoted = false;
  private count = 0;
  private pending = false;

  push(chunk: Uint8Array): void {
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      if (b === 0x22) this.quoted = !this.quoted;
      else if (b === 0x0a && !this.quoted) {
        this.count++;
        this.pending = false;
        continue;
      }
      if (b !== 0x0d) this.pending = true;
    }
  }

  /** Records seen, a last line without a newline included. */
  records(): number {
    return this.count + (this.pending ? 1 : 0);
  }
}

/** Parses CSV text into rows of fields. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += ch;
  }
  if (field !== '' || row.length) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

/**
 * Parses CSV as it arrives, chunk by chunk: quotes, doubled quotes, CRLF and multi-byte characters may all be
 * split across chunks. Each push returns the records it completed.
 */
export class CsvStreamParser {
  private readonly decoder = new TextDecoder('utf-8');
  private field = '';
  private row: string[] = [];
  private quoted = false;
  /** A quote seen inside a quoted field: either the close or the first half of `""`. */
  private quoteInQuoted = false;
  /** A record just ended on CR: an LF right after belongs to it. */
  private afterCR = false;
  /** Something of the current record was seen (so an unterminated last line still counts). */
  private started = false;

  push(chunk: Uint8Array | string): string[][] {
    return this.scan(typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true }));
  }

  /** Flushes the last record when the text did not end with a newline. */
  end(): string[][] {
    const records = this.scan(this.decoder.decode());
    this.quoted = false;
    this.quoteInQuoted = false;
    if (this.started) {
      this.row.push(this.field);
      records.push(this.row);
      this.row = [];
      this.field = '';
      this.started = false;
    }
    return records;
  }

  private scan(text: string): string[][] {
    const records: string[][] = [];
    for (const ch of text) {
      if (this.afterCR) {
        this.afterCR = false;
        if (ch === '\n') continue;
      }
      if (this.quoteInQuoted) {
        this.quoteInQuoted = false;
        if (ch === '"') {
          this.field += '"';
          continue;
        }
        this.quoted = false;
      } else if (this.quoted) {
        if (ch === '"') this.quoteInQuoted = true;
        else this.field += ch;
        continue;
      }
      if (ch === '"') {
        this.quoted = true;
        this.started = true;
      } else if (ch === ',') {
        this.row.push(this.field);
        this.field = '';
        this.started = true;
      } else if (ch === '\n' || ch === '\r') {
        this.row.push(this.field);
        records.push(this.row);
        this.row = [];
        this.field = '';
        this.started = false;
        this.afterCR = ch === '\r';
      } else {
        this.field += ch;
        this.started = true;
      }
    }
    return records;
  }
}
