import { Type, type Static } from '@sinclair/typebox';
import { op } from './op.js';
import { SortDTO } from './query.js';
import { busRequest, Page, PageSize } from './schemas.js';
import { Task } from './tasks.js';

/*
 * Saved views (docs/views.md): a named query, optionally on a board and shared with the board's
 * readers, run for whoever reads it (its functions resolved for that reader).
 */

const Timestamp = Type.String({ format: 'date-time' });
const ViewName = Type.String({ minLength: 1, maxLength: 200, description: 'display name' });
const ViewQuery = Type.String({ description: 'query language text (functions kept as written, resolved per reader)' });

/** Path parameters of `/api/v1/views/{viewId}`. */
export const ViewParams = Type.Object({ viewId: Type.String({ minLength: 1 }) });

/** Body of `POST /api/v1/views`. */
export const ViewCreateBody = Type.Object(
  {
    name: ViewName,
    query: ViewQuery,
    board_id: Type.Optional(Type.String({ minLength: 1, description: 'the board the view runs on (its scope; `activeSprint()`)' })),
    sort: Type.Optional(SortDTO),
    shared: Type.Optional(Type.Boolean({ description: "true: every reader of the view's board sees it (needs `board_id`)" })),
  },
  { additionalProperties: false },
);
export type ViewCreateBody = Static<typeof ViewCreateBody>;

/** Body of `PATCH /api/v1/views/{viewId}`: the fields it carries change; `board_id: ""` and `sort: null` clear. */
export const ViewUpdateBody = Type.Object(
  {
    name: Type.Optional(ViewName),
    query: Type.Optional(ViewQuery),
    board_id: Type.Optional(Type.String({ description: 'a board id, or "" to clear' })),
    sort: Type.Optional(Type.Union([SortDTO, Type.Null()], { description: 'a sort, or null to clear' })),
    shared: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type ViewUpdateBody = Static<typeof ViewUpdateBody>;

/** A saved view as the API returns it. */
export const View = Type.Object({
  id: Type.String(),
  name: Type.String(),
  query: Type.String(),
  board_id: Type.Optional(Type.String()),
  sort: Type.Optional(SortDTO),
  shared: Type.Boolean(),
  owner_id: Type.String(),
  is_owner: Type.Boolean({ description: 'true when the caller owns it (only the owner may change or delete it)' }),
  version: Type.Integer({ minimum: 1 }),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type View = Static<typeof View>;

/** The views the caller can read: its own and those shared through a board it can read. */
export const ViewList = Type.Object({ data: Type.Array(View) });

/** Body of `POST /api/v1/views/{viewId}/query`. */
export const ViewQueryBody = Type.Object({ page: Type.Optional(Page), page_size: Type.Optional(PageSize) }, { additionalProperties: false });
export type ViewQueryBody = Static<typeof ViewQueryBody>;

/** A page of the view's tasks for the caller. */
export const ViewQueryResult = Type.Object({
  data: Type.Array(Task),
  total: Type.Integer(),
  page: Type.Integer(),
  page_size: Type.Integer(),
  effective_query: Type.String({ description: 'the view query as stored (functions as written)' }),
});

const viewVersion = (v: View) => v.version;

/** The saved views' bus API (query service), subjects `views.<verb>`. */
export const ViewsOps = {
  create: op({ subject: 'views.create', request: busRequest({}, ViewCreateBody.properties), response: View, versionOf: viewVersion }),
  list: op({ subject: 'views.list', request: Type.Object({}), response: ViewList }),
  get: op({ subject: 'views.get', request: busRequest(ViewParams.properties), response: View, versionOf: viewVersion }),
  update: op({ subject: 'views.update', request: busRequest(ViewParams.properties, ViewUpdateBody.properties), response: View, versionOf: viewVersion }),
  remove: op({ subject: 'views.remove', request: busRequest(ViewParams.properties), response: Type.Null() }),
  query: op({ subject: 'views.query', request: busRequest(ViewParams.properties, ViewQueryBody.properties), response: ViewQueryResult }),
} as const;
