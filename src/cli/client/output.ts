/** `table` for people (the default on a terminal), `json` for programs (the default in a pipe). */
export type Format = 'table' | 'json';

export const defaultFormat = (): Format => (process.stdout.isTTY ? 'table' : 'json');

const cell = (v: unknown): string => {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v) ?? '';
};

/** Rows under a header, each column as wide as its widest cell. */
function table(rows: Record<string, unknown>[], columns: string[]): string {
  const cells = [columns.map((c) => c.toUpperCase()), ...rows.map((r) => columns.map((c) => cell(r[c])))];
  const widths = columns.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  return cells.map((row) => row.map((v, i) => (i === row.length - 1 ? v : v.padEnd(widths[i] ?? 0))).join('  ')).join('\n');
}

/** One resource as `field  value` lines. */
function fields(resource: Record<string, unknown>): string {
  const width = Math.max(0, ...Object.keys(resource).map((k) => k.length));
  return Object.entries(resource)
    .map(([k, v]) => `${k.padEnd(width)}  ${cell(v)}`)
    .join('\n');
}

export function render(value: unknown, format: Format, columns: string[]): string {
  if (format === 'json') return JSON.stringify(value, null, 2);
  if (Array.isArray(value)) return value.length ? table(value as Record<string, unknown>[], columns) : '(none)';
  if (value && typeof value === 'object') return fields(value as Record<string, unknown>);
  return cell(value);
}
