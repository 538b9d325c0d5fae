import { once } from 'node:events';
import { stringify } from 'csv-stringify/sync';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Bus, CallMeta } from '@app/shared/bus';
import { BoardPathParams, ExportOps, ExportQuerystring, type ExportCard, type ExportPage } from '@app/shared/contracts';
import { AppError } from '@app/shared/errors';
import type { LocalRoute } from './local.js';

/** The `format` and `version` of a JSON export: what `POST /api/v1/imports` reads as `board-json`. */
export const BOARD_JSON = { format: 'board-json', version: 1 } as const;
/** The columns of a CSV export, in order (a plain CSV import reads them back by these names). */
export const CSV_COLUMNS = ['id', 'title', 'status', 'tags', 'assignee', 'kickoff', 'deadline', 'path', 'description', 'metadata', 'linked_to_ids', 'notes', 'created_at', 'updated_at'] as const;

/** One CSV row of a card: lists joined with `, `, metadata and notes as JSON text. */
function csvRow(c: ExportCard): string {
  return stringify([[
    c.id, c.title, c.status, c.tags.join(', '), c.assignee ?? '', c.kickoff ?? '', c.deadline ?? '', c.path, c.description,
    JSON.stringify(c.metadata), c.linked_to_ids.join(', '), JSON.stringify(c.notes), c.created_at, c.updated_at,
  ]]);
}

/** The bus meta of a gateway request made for its caller (request id, user, token grant). */
function metaOf(req: FastifyRequest): CallMeta {
  const meta: CallMeta = { requestId: req.id, userId: req.user.sub, sourceAddress: req.ip };
  if (req.user.grant) meta.grant = req.user.grant;
  return meta;
}

/**
 * Streams a board export (docs/import-export.md "Export"): the first page is asked for before the
 * answer starts, so a board the caller cannot read is a plain 404 (and any other error its JSON
 * error); then each page is one bus request to the query service (`query.exportPage`, keyset by
 * card id), written as it arrives, the next asked for once the client has read the last (the
 * socket's backpressure): the gateway holds one page at a time, whatever the board's size. A
 * failure after the head (a page's 503) ends the connection without the closing bracket, so a
 * cut-off export never parses as a whole one.
 */
async function streamExport(req: FastifyRequest, reply: FastifyReply, bus: Bus): Promise<void> {
  const { boardId } = req.params as { boardId: string };
  const format = (req.query as { format?: 'json' | 'csv' }).format ?? 'json';
  const meta = metaOf(req);
  const page = async (after?: string): Promise<ExportPage> => bus.request(ExportOps.page, after === undefined ? { boardId, first: true } : { boardId, after }, meta);
  let current = await page();
  const raw = reply.raw;
  let closed = false;
  raw.on('close', () => void (closed = true));
  reply.hijack();
  raw.writeHead(200, {
    'content-type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
    'content-disposition': `attachment; filename="board-${boardId.replace(/[^A-Za-z0-9_-]/g, '_')}.${format}"`,
    'x-request-id': req.id,
    'cache-control': 'no-store',
  });
  const write = async (text: string) => {
    if (!raw.write(text) && !closed) await Promise.race([once(raw, 'drain'), once(raw, 'close')]);
  };
  try {
    if (format === 'csv') await write(stringify([[...CSV_COLUMNS]]));
    else await write(`{"format":"${BOARD_JSON.format}","version":${BOARD_JSON.version},"exported_at":${JSON.stringify(new Date().toISOString())},"board":${JSON.stringify(current.board)},"cards":[`);
    let n = 0;
    for (;;) {
      for (const card of current.cards) {
        if (closed) return;
        await write(format === 'csv' ? csvRow(card) : `${n++ === 0 ? '' : ','}${JSON.stringify(card)}`);
      }
      if (current.next_after === undefined || closed) break;
      current = await page(current.next_after);
    }
    if (format === 'json') await write(']}');
    raw.end();
  } catch (err) {
    req.log.warn({ err: AppError.from(err).toWire() }, 'board export cut off by a failed page');
    raw.destroy();
  }
}

/** `GET /api/v1/boards/{id}/export`: answered by the gateway, streaming pages of the query service. */
export const exportRoutes: LocalRoute[] = [
  {
    method: 'GET',
    url: '/api/v1/boards/:boardId/export',
    summary: 'Export every card of the board\'s scope with its fields, metadata, links and notes, streamed: `format=json` (board-json, re-importable with POST /api/v1/imports) or `csv`',
    tag: 'boards',
    authenticated: true,
    scope: 'read',
    params: BoardPathParams,
    querystring: ExportQuerystring,
    produces: ['application/json', 'text/csv'],
    stream: (req, reply, deps) => streamExport(req, reply, deps.bus),
  },
];
