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
