import { parse } from 'csv-parse/sync';
import { AppError } from '@app/shared/errors';

/** One data row of a CSV: its line number in the file (the header is line 1) and its cells. */
export interface CsvRow {
  line: number;
  cells: string[];
}

/** A CSV file as read: the header cells (trimmed, in order, repeats kept) and the data rows. */
export interface CsvTable {
  header: string[];
  rows: CsvRow[];
}

/**
 * Reads CSV text (RFC 4180: quoted fields with doubled quotes and line breaks inside; a UTF-8 BOM
 * skipped; `,` or, when the header has more of them, `;` as the delimiter) with csv-parse. Rows
 * with another number of cells than the header are kept (missing cells read as empty). Blank
 * lines are skipped. Malformed CSV (an unclosed quote) is 400 `VALIDATION_FAILED` naming `/data`
 * and the line.
 */
export function readCsv(text: string): CsvTable {
  const firstLine = text.slice(0, Math.max(0, text.indexOf('\n')) || text.length);
  const delimiter = (firstLine.match(/;/g)?.length ?? 0) > (firstLine.match(/,/g)?.length ?? 0) ? ';' : ',';
  let records: Array<{ record: string[]; info: { lines: number } }>;
  try {
    records = parse(text, { bom: true, delimiter, relax_column_count: true, skip_empty_lines: true, info: true }) as never;
  } catch (e) {
    const err = e as { message?: string; lines?: number };
    throw new AppError('VALIDATION_FAILED', {
      message: `The CSV cannot be read: ${err.message ?? 'malformed'}`,
      validationErrors: [{ field: '/data', code: 'csv', message: `${err.message ?? 'malformed CSV'}${err.lines ? ` (line ${err.lines})` : ''}` }],
    });
  }
  if (records.length === 0) {
    throw new AppError('VALIDATION_FAILED', { message: 'The CSV is empty', validationErrors: [{ field: '/data', code: 'required', message: 'the CSV has no header row' }] });
  }
  const [head, ...body] = records;
  return {
    header: head!.record.map((h) => h.trim()),
    // info.lines is the line the record ends on; a record spanning lines is named by that line
    rows: body.map(({ record, info }) => ({ line: info.lines, cells: record })),
  };
}

/** Indexes of the header cells named `name` (case-insensitive), in order: Jira repeats `Labels`, `Sprint`, `Comment`. */
export function columnsNamed(header: readonly string[], name: string): number[] {
  const want = name.trim().toLowerCase();
  const out: number[] = [];
  header.forEach((h, i) => {
    if (h.toLowerCase() === want) out.push(i);
  });
  return out;
}
