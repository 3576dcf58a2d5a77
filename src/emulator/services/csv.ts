// CSV as the production export writes it (Rust csv crate defaults): quote only when needed, LF line ends.

export type CsvValue = string | number | null;

export function csvField(value: CsvValue): string {
  if (value === null) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function toCsv(header: readonly string[], rows: readonly CsvValue[][]): string {
  let out = header.map(csvField).join(',') + '\n';
  for (const row of rows) out += row.map(csvField).join(',') + '\n';
  return out;
}
