import type { Method } from './route.js';

/**
 * Operation ids of the API documents (docs/http.md "Operation ids"): every operation has a stable
 * `verbNoun` id. A bus route's id is made from its op's subject (`sprints.close` → `closeSprint`,
 * `boards.addMember` → `addBoardMember`), a local route's from its method and path
 * (`GET /api/v1/tokens` → `listTokens`), unless the row names one (`operationId`) or
 * {@link OPERATION_IDS} overrides it. A legacy path's operation is the target's id + `Legacy`; an
 * alias path's the row's id + `Alias` (+ a number from the second alias on).
 */

/** Ids where the derived one reads badly: op subject (bus routes) or `METHOD /path` (local routes) → id. */
export const OPERATION_IDS: Readonly<Record<string, string>> = {
  // tasks
  'tasks.remove': 'deleteTask',
  'tasks.deleteMetadata': 'deleteTaskMetadataKey',
  'tasks.movePath': 'moveTaskPath',
  'tasks.createBatch': 'createTasksBatch',
  'tasks.updateBatch': 'updateTasksBatch',
  'tasks.checkIn': 'checkInTask',
  'tasks.getMany': 'getTasksBatch',
  'tasks.updateMany': 'updateTasksSame',
  'tasks.updateEach': 'updateTasksEach',
  'tasks.deleteMany': 'deleteTasksBatch',
  'tasks.transfer': 'transferTasks',
  'tasks.upsert': 'upsertTasks',
  // boards, groups, cards
  'boards.remove': 'deleteBoard',
  'boards.previewCreate': 'previewCreateBoard',
  'boards.previewUpdate': 'previewUpdateBoard',
  'boards.ensureDefault': 'ensureDefaultBoard',
  'boards.members': 'listBoardMembers',
  'boards.removeMember': 'removeBoardMember',
  'boards.previewActions': 'previewColumnActions',
  'boards.createTask': 'createCard',
  'boards.move': 'moveCard',
  'boards.claim': 'claimCard',
  'boards.renewLease': 'renewLease',
  'boards.completeLease': 'completeLease',
  'boards.releaseLease': 'releaseLease',
  // query
  'query.events': 'listEvents',
  'query.tasks': 'queryTasks',
  'query.board': 'queryBoard',
  'query.column': 'queryColumn',
  'query.boardTasks': 'listBoardTasks',
  'query.summary': 'getBoardSummary',
  'query.validate': 'validateQuery',
  // sprints
  'sprints.report': 'getSprintReport',
  'sprints.velocity': 'getVelocity',
  'sprints.burndown': 'getBurndown',
  // events and webhooks
  'webhooks.remove': 'deleteWebhook',
  'webhooks.deliveries': 'listWebhookDeliveries',
  'webhooks.retry': 'retryWebhookDelivery',
  // flow
  'flow.cumulative': 'getCumulativeFlow',
  'flow.cycleTime': 'getCycleTime',
  'flow.snapshot': 'takeFlowSnapshot',
  // views
  'views.remove': 'deleteView',
  'views.query': 'queryView',
  // the gateway's own routes
  'POST /auth/v2/register': 'registerUser',
  'POST /auth/register': 'registerUserV1',
  'POST /auth/v2/login': 'loginUser',
  'POST /auth/refresh-token': 'refreshToken',
  'POST /auth/logout': 'logoutUser',
  'GET /auth/methods': 'listSignInMethods',
  'GET /auth/oidc/login': 'startOidcLogin',
  'GET /auth/oidc/callback': 'finishOidcLogin',
  'POST /auth/oidc/exchange': 'exchangeOidcCode',
  'GET /health': 'getHealth',
  'GET /health/ready': 'getReadiness',
  'GET /metrics': 'getMetrics',
  'GET /version': 'getVersion',
  'GET /api/v1/events/stream': 'streamEvents',
  'POST /api/v1/tokens': 'createAccessToken',
  'GET /api/v1/tokens': 'listAccessTokens',
  'DELETE /api/v1/tokens/:tokenId': 'revokeAccessToken',
  'GET /api/v1/audit': 'listAuditEntries',
  'POST /mcp': 'sendMcpMessage',
  'GET /mcp': 'openMcpStream',
  'DELETE /mcp': 'closeMcpSession',
};

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
/** `tasks` → `Task`, `query` → `Query`, `custom-fields` → `CustomField`. */
const singular = (s: string) => pascal(s).replace(/ies$/, 'y').replace(/(?<!s)s$/, '');
const pascal = (s: string) => s.split(/[^A-Za-z0-9]+/).filter(Boolean).map(cap).join('');

/**
 * The derived id of a bus op's subject `service.action`: the action's first word is the verb,
 * the service's noun follows (plural after `list`), then the action's other words
 * (`boards.addMember` → `addBoardMember`). Pure.
 */
export function idFromSubject(subject: string): string {
  const [service = '', action = ''] = subject.split('.');
  const [verb = action, ...rest] = action.split(/(?=[A-Z])/);
  const noun = verb === 'list' && rest.length === 0 ? pascal(service) : singular(service);
  return `${verb}${noun}${rest.join('')}`;
}

const VERBS: Record<Method, string> = { GET: 'get', POST: 'create', PUT: 'replace', PATCH: 'update', DELETE: 'delete' };

/**
 * The derived id of `METHOD /path`: a verb from the method (a GET of a collection is `list`)
 * and the nouns of the path's fixed segments after `/api/v1`, each singular but the last of a
 * list (`GET /api/v1/custom-fields/:fieldId` → `getCustomField`). Pure.
 */
export function idFromPath(method: Method, url: string): string {
  const segments = url.split('/').filter(Boolean);
  const start = segments[0] === 'api' && segments[1] === 'v1' ? 2 : 0;
  const rest = segments.slice(start);
  const last = rest[rest.length - 1] ?? '';
  const collection = method === 'GET' && !last.startsWith(':');
  const nouns = rest.filter((s) => !s.startsWith(':'));
  const words = nouns.map((s, i) => (collection && i === nouns.length - 1 ? pascal(s) : singular(s)));
  return `${collection ? 'list' : VERBS[method]}${words.join('') || 'Root'}`;
}

/** The id of a row: its own `operationId`, else the override, else the derived one (subject, or method and path). */
export function operationIdOf(row: { method: Method; url: string; operationId?: string | undefined; op?: { subject: string } | undefined }): string {
  if (row.operationId) return row.operationId;
  const key = row.op ? row.op.subject : `${row.method} ${row.url}`;
  return OPERATION_IDS[key] ?? (row.op ? idFromSubject(row.op.subject) : idFromPath(row.method, row.url));
}
