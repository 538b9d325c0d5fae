import { setImmediate as yieldTurn } from 'node:timers/promises';
import { parse as parseStream, type Options } from 'csv-parse';
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
  let records: CsvRecord[];
  try {
    records = parse(text, optionsFor(text)) as never;
  } catch (e) {
    throw unreadable(e);
  }
  return tableOf(records);
}

/** One record as csv-parse gives it with `info: true`. */
type CsvRecord = { record: string[]; info: { lines: number } };

/** Characters handed to the streaming parser at a time ({@link readCsvInSteps}). */
const STEP_CHARS = 64 * 1024;

/** csv-parse's options for `text`: the delimiter sniffed from its first line. */
function optionsFor(text: string): Options {
  const firstLine = text.slice(0, Math.max(0, text.indexOf('\n')) || text.length);
  const delimiter = (firstLine.match(/;/g)?.length ?? 0) > (firstLine.match(/,/g)?.length ?? 0) ? ';' : ',';
  return { bom: true, delimiter, relax_column_count: true, skip_empty_lines: true, info: true };
}

/** The 400 of CSV csv-parse cannot read, naming `/data` and the line. */
function unreadable(e: unknown): AppError {
  const err = e as { message?: string; lines?: number };
  return new AppError('VALIDATION_FAILED', {
    message: `The CSV cannot be read: ${err.message ?? 'malformed'}`,
    validationErrors: [{ field: '/data', code: 'csv', message: `${err.message ?? 'malformed CSV'}${err.lines ? ` (line ${err.lines})` : ''}` }],
  });
}

/**
 * {@link readCsv} through csv-parse's streaming API, fed {@link STEP_CHARS} characters at a time
 * with a turn of the event loop between them: a large file is read without holding the process
 * (an import request's parse). Same answer and errors as `readCsv`.
 */
export async function readCsvInSteps(text: string): Promise<CsvTable> {
  const parser = parseStream(optionsFor(text));
  const records: CsvRecord[] = [];
  let failed: unknown;
  parser.on('readable', () => {
    let r: CsvRecord | null;
    while ((r = parser.read() as CsvRecord | null) !== null) records.push(r);
  });
  const ended = new Promise<void>((resolve) => {
    parser.on('end', () => resolve());
    parser.on('error', (e) => {
      failed = e;
      resolve();
    });
  });
  for (let i = 0; i < text.length && failed === undefined; i += STEP_CHARS) {
    parser.write(text.slice(i, i + STEP_CHARS));
    await yieldTurn();
  }
  if (failed === undefined) parser.end();
  await ended;
  if (failed !== undefined) throw unreadable(failed);
  return tableOf(records);
}

/** The header and rows of parsed records; 400 for a CSV without a header row. */
function tableOf(records: CsvRecord[]): CsvTable {
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
