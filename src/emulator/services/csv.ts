// CSV as the production export writes it (Rust csv crate defaults): quote only when needed, LF line ends, and the
// header written together with the first record, so no records make a 0-byte file.

export type CsvValue = string | number | null;

export function csvField(value: CsvValue): string {
  if (value === null) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Records, each ended by LF, with no header. */
export function toCsvRows(rows: readonly (readonly CsvValue[])[]): string {
  let out = '';
  for (const row of rows) out += row.map(csvField).join(',') + '\n';
  return out;
}

/** The header before `records` (toCsvRows'), or nothing at all when there are none. */
export function withHeader(header: readonly string[], records: string): string {
  return records === '' ? '' : toCsvRows([header]) + records;
}
