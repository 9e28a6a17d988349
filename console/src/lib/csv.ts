/**
 * CSV files the console offers for download (RFC 4180: comma-separated, CRLF line ends, fields
 * quoted when they hold a comma, a quote or a line break). Cells come from visitors (names,
 * e-mails), so a cell a spreadsheet would read as a formula (`=`, `+`, `-`, `@`, a tab or a carriage
 * return first) is prefixed with `'`, which spreadsheets show as text.
 */

function cell(value: string | number | null | undefined): string {
  let text = value === null || value === undefined ? "" : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function toCsv(
  header: readonly string[],
  rows: readonly (readonly (string | number | null)[])[],
): string {
  return `${[header, ...rows].map((row) => row.map(cell).join(",")).join("\r\n")}\r\n`;
}

/** Offers `text` as a file download named `filename`. */
export function downloadCsv(filename: string, text: string): void {
  // A byte-order mark: spreadsheet programs then read the file as UTF-8 (accented names).
  const url = URL.createObjectURL(new Blob(["\uFEFF", text], { type: "text/csv;charset=utf-8" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1_000);
}
