/**
 * Every HTTP operation the web board calls, as data: method, path (Swagger syntax,
 * `{param}`), and the body and query-string fields the client may send. The client can only call
 * what is listed here, and `web/test/api-contract.test.ts` checks every row against the gateway's
 * own Swagger document (`GET /api/v1/swagger.json`): a path, method or field Swagger does not have
 * fails the test.
 */
export interface Endpoint {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  /** Body fields the client may send (a subset of the Swagger body schema's properties). */
  body?: readonly string[];
  /** Query-string fields the client may send. */
  query?: readonly string[];
  /** Public route: sent without the bearer token. */
  public?: boolean;
}

const e = <const T extends Record<string, Endpoint>>(t: T) => t;

export const endpoints = e({
  register: { method: 'POST', path: '/auth/v2/register', body: ['username', 'password'], public: true },
  login: { method: 'POST', path: '/auth/v2/login', body: ['username', 'password'], public: true },
  refresh: { method: 'POST', path: '/auth/refresh-token', body: ['refreshToken'], public: true },
  logout: { method: 'POST', path: '/auth/logout', body: ['refreshToken'], public: true },
  signInMethods: { method: 'GET', path: '/auth/methods', public: true },
  oidcExchange: { method: 'POST', path: '/auth/oidc/exchange', body: ['code'], public: true },

  listBoards: { method: 'GET', path: '/api/v1/boards' },
  createBoard: { method: 'POST', path: '/api/v1/boards', body: ['name', 'board_type', 'columns', 'default_tags'] },
  getBoard: { method: 'GET', path: '/api/v1/boards/{boardId}' },
  boardMembers: { method: 'GET', path: '/api/v1/boards/{boardId}/members' },
  addBoardMember: { method: 'POST', path: '/api/v1/boards/{boardId}/members', body: ['username', 'permission'] },
  updateBoardMember: { method: 'PATCH', path: '/api/v1/boards/{boardId}/members/{userId}', body: ['permission'] },
  removeBoardMember: { method: 'DELETE', path: '/api/v1/boards/{boardId}/members/{userId}' },
  updateBoard: { method: 'PUT', path: '/api/v1/boards/{boardId}', body: ['name', 'columns', 'activeSprintId'] },
  shareBoard: { method: 'POST', path: '/api/v1/boards/{boardId}/share', body: ['group_id', 'permission'] },
  previewActions: { method: 'POST', path: '/api/v1/boards/preview-actions', body: ['query'] },
  boardQuery: { method: 'POST', path: '/api/v1/boards/{boardId}/query', body: ['query', 'page', 'page_size'] },
  listSprints: { method: 'GET', path: '/api/v1/boards/{boardId}/sprints', query: ['state'] },
  createBoardSprint: { method: 'POST', path: '/api/v1/boards/{boardId}/sprints', body: ['title', 'goal', 'kickoff', 'deadline', 'start'] },
  velocity: { method: 'GET', path: '/api/v1/boards/{boardId}/velocity', query: ['last'] },
  flow: { method: 'GET', path: '/api/v1/boards/{boardId}/flow', query: ['from', 'to'] },
  cycleTime: { method: 'GET', path: '/api/v1/boards/{boardId}/cycle-time', query: ['from', 'to'] },
  startSprint: { method: 'POST', path: '/api/v1/tasks/{sprintId}/start-sprint', body: ['board_ids'] },
  sprintReport: { method: 'GET', path: '/api/v1/tasks/{sprintId}/report' },
  burndown: { method: 'GET', path: '/api/v1/tasks/{sprintId}/burndown' },
  summary: { method: 'GET', path: '/api/v1/boards/{boardId}/summary', query: ['sprint', 'preview'] },
  readColumn: {
    method: 'POST',
    path: '/api/v1/boards/{boardId}/columns/{columnId}/query',
    body: ['sprint', 'filter', 'page', 'page_size'],
  },
  createCard: { method: 'POST', path: '/api/v1/boards/{boardId}/tasks', body: ['title', 'column_id', 'description', 'tags'] },
  moveCard: { method: 'POST', path: '/api/v1/boards/{boardId}/tasks/{taskId}/move', body: ['from_column_id', 'to_column_id', 'dry_run'] },

  getTask: { method: 'GET', path: '/api/v1/tasks/{taskId}' },
  updateTask: { method: 'PATCH', path: '/api/v1/tasks/{taskId}', body: ['title', 'description', 'status', 'tags', 'assignee', 'kickoff', 'deadline'] },
  deleteTask: { method: 'DELETE', path: '/api/v1/tasks/{taskId}' },
  setMetadata: { method: 'PATCH', path: '/api/v1/tasks/{taskId}/metadata', body: ['key', 'value'] },
  deleteMetadata: { method: 'DELETE', path: '/api/v1/tasks/{taskId}/metadata/{key}' },
  addNote: { method: 'POST', path: '/api/v1/tasks/{taskId}/notes', body: ['content'] },
  queryTasks: { method: 'POST', path: '/api/v1/tasks/query', body: ['query', 'pageSize', 'view'] },
  validateQuery: { method: 'POST', path: '/api/v1/tasks/query/validate', body: ['query', 'board_id'] },
  listViews: { method: 'GET', path: '/api/v1/views' },
  createView: { method: 'POST', path: '/api/v1/views', body: ['name', 'query', 'board_id', 'shared'] },
  closeSprint: { method: 'POST', path: '/api/v1/tasks/{sprintId}/close-sprint', body: ['rollover'] },

  listCustomFields: { method: 'GET', path: '/api/v1/custom-fields', query: ['board_id'] },
  createCustomField: { method: 'POST', path: '/api/v1/custom-fields', body: ['key', 'name', 'type', 'options', 'group_id'] },
  updateCustomField: { method: 'PATCH', path: '/api/v1/custom-fields/{fieldId}', body: ['name', 'options'] },
  deleteCustomField: { method: 'DELETE', path: '/api/v1/custom-fields/{fieldId}' },

  listGroups: { method: 'GET', path: '/api/v1/groups' },
  createGroup: { method: 'POST', path: '/api/v1/groups', body: ['name'] },
  addGroupMember: { method: 'POST', path: '/api/v1/groups/{groupId}/members', body: ['user_id', 'role'] },

  // imports (docs/import-export.md): the dry run and the job, then the job's state
  startImport: { method: 'POST', path: '/api/v1/imports', body: ['format', 'data', 'mapping', 'dry_run'] },
  getImport: { method: 'GET', path: '/api/v1/imports/{importId}' },
  // personal access tokens (the Tokens page) and leases (a claimed card's Release)
  listTokens: { method: 'GET', path: '/api/v1/tokens' },
  createToken: { method: 'POST', path: '/api/v1/tokens', body: ['name', 'scopes', 'board_ids', 'expires_at'] },
  revokeToken: { method: 'DELETE', path: '/api/v1/tokens/{tokenId}' },
  releaseLease: { method: 'POST', path: '/api/v1/tasks/{taskId}/lease/release', body: ['lease_id'] },
});

export type EndpointName = keyof typeof endpoints;

/** The live event stream, used when the gateway has it; not required to exist. */
export const EVENTS_STREAM_PATH = '/api/v1/events/stream';
