import { BoardDryRunQuery, ImportCreateBody, ImportJob, ImportParams, ImportPreview, ImportsOps } from '@app/shared/contracts';
import { IMPORT_BODY_LIMIT } from '../plugins/uploads.js';
import { route, type RouteSpec } from './route.js';

/**
 * Imports of boards from other tools (docs/import-export.md), served by the boards service: the
 * create (a job, 202; or the dry run, 200) and the job's state. Draft: target paths only. The
 * create also takes a multipart upload (a `file` part beside the same fields, plugins/uploads.ts).
 */
export const importRoutes: RouteSpec[] = [
  route({
    method: 'POST', url: '/api/v1/imports', op: ImportsOps.create,
    input: (req) => req.body,
    summary: 'Import a board from Trello (JSON), Jira (CSV) or a CSV, or a board export (board-json): a job (202 with its id); `dry_run: true` answers what would be created and every problem. Also multipart/form-data with a `file` part',
    tag: 'imports', maturity: 'draft', body: ImportCreateBody, querystring: BoardDryRunQuery, response: ImportJob, status: 202,
    dryRun: { op: ImportsOps.preview, response: ImportPreview }, bodyLimit: IMPORT_BODY_LIMIT,
  }),
  route({
    method: 'GET', url: '/api/v1/imports/:importId', op: ImportsOps.get,
    input: (req) => ({ importId: req.params.importId! }),
    summary: 'An import job: state (queued, running, done, failed), progress, counts, problems and the board it made',
    tag: 'imports', maturity: 'draft', params: ImportParams, response: ImportJob,
  }),
];
