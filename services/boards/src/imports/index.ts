import { invalidField } from '@app/shared/errors';
import { parseBoardJson } from './board-json.js';
import { parseJiraCsv } from './jira.js';
import { parsePlainCsv } from './plain-csv.js';
import type { CsvTable } from './csv.js';
import type { ImportFormat, ImportMapping, ImportPlan } from './plan.js';
import { parseTrello } from './trello.js';

export * from './plan.js';
export { readCsv, readCsvInSteps, columnsNamed, type CsvTable } from './csv.js';
export { parseTrello } from './trello.js';
export { parseJiraCsv, JIRA_COLUMNS } from './jira.js';
export { parsePlainCsv, CSV_FIELDS } from './plain-csv.js';
export { parseBoardJson, BOARD_JSON_FORMAT, BOARD_JSON_VERSION } from './board-json.js';

/**
 * The plan of an export in `format` (docs/import-export.md): `data` is the export object
 * (`trello`, `board-json`; a JSON text of it is parsed first) or the CSV text (`jira-csv`, `csv`).
 * Pure. Throws 400 `VALIDATION_FAILED` naming `/data…` or `/mapping…` when the export cannot be read at all;
 * problems of single cards are in the plan's `problems`. `csv`: the CSV formats' file already read
 * (`readCsvInSteps`).
 */
export function parseImport(format: ImportFormat, data: unknown, mapping: ImportMapping = {}, csv?: CsvTable): ImportPlan {
  const json = () => {
    if (typeof data !== 'string') return data;
    try {
      return JSON.parse(data) as unknown;
    } catch (e) {
      throw invalidField('/data', `is not JSON: ${(e as Error).message}`, 'format');
    }
  };
  switch (format) {
    case 'trello': return parseTrello(json(), mapping);
    case 'board-json': return parseBoardJson(json());
    case 'jira-csv': return parseJiraCsv(data, mapping, csv);
    case 'csv': return parsePlainCsv(data, mapping, csv);
  }
}
