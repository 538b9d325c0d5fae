import { endpoints, type Endpoint, type EndpointName } from './endpoints.js';
import { fieldSentence, queryMessage } from './humane.js';
import type {
  CustomField, CustomFieldOption, Board, BoardList, CycleTime, Flow, BoardMember, BoardTaskPage, Burndown, CloseSprintResult, SprintReport, SprintSummary, StartSprintResult, Velocity, ColumnInput, ColumnPage, ErrorBody, Group, MoveResult, Note, Preview, Summary, Task,
  TaskDetail, TaskPage, TokenPair,
} from './types.js';

/** A failed API call: the HTTP status and the error body of the catalogue (docs/http.md). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
  ) {
    super(body.message);
    this.name = 'ApiError';
  }
  get code(): string {
    return this.body.code;
  }
  /** `details.position` of a query-language error (offset into the text sent), when the server gave one. */
  get position(): number | undefined {
    const p = this.body.details?.position;
    return typeof p === 'number' ? p : undefined;
  }
}

/**
 * The text a page shows for a failed call, one sentence (web/src/api/humane.ts): for a
 * `VALIDATION_FAILED` the first field at fault named once ("Password must have at least 8
 * characters."), for a query-language error its message without the part label, otherwise the
 * catalogue's message; anything else (a network failure, a bug) as its own text.
 */
export function errorText(err: unknown): string {
  if (!(err instanceof ApiError)) return err instanceof Error ? err.message : String(err);
  const first = err.body.validationErrors?.[0];
  if (first) return fieldSentence(first);
  return err.code.startsWith('QUERY_') ? queryMessage(err.message) : err.message;
}

/**
 * An answer's body: its JSON value (`undefined` for an empty body), or `json: false` when the
 * text is not JSON (a proxy's HTML error page in front of the gateway).
 */
function jsonOf(text: string): { json: true; value: unknown } | { json: false } {
  if (text === '') return { json: true, value: undefined };
  try {
    return { json: true, value: JSON.parse(text) as unknown };
  } catch {
    return { json: false };
  }
}

/**
 * The error body of a failed answer: the gateway's own (docs/http.md "Error body"), or, when
 * something in front of it answered (an HTML 502, an empty 503), `HTTP_<status>` with the status text.
 */
function errorBodyOf(answer: ReturnType<typeof jsonOf>, res: Response): ErrorBody {
  if (answer.json) {
    const v = answer.value as Partial<ErrorBody> | undefined;
    if (v && typeof v === 'object' && typeof v.code === 'string' && typeof v.message === 'string') return v as ErrorBody;
  }
  return { code: `HTTP_${res.status}`, message: res.statusText || `HTTP ${res.status}` };
}

/** What the board keeps of a login (localStorage key {@link SESSION_KEY}). */
export interface Session {
  accessToken: string;
  refreshToken: string;
  /** Epoch milliseconds at which the access token expires. */
  expiresAt: number;
  userId: string;
  userName: string;
}

export const SESSION_KEY = 'board.session';

/** Where the session is kept: `localStorage` in the browser (the subset of Storage used). */
export interface SessionStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}
/** Refresh this long before the access token expires (milliseconds). */
const REFRESH_EARLY_MS = 30_000;

interface CallOptions {
  params?: Record<string, string>;
  body?: Record<string, unknown>;
  query?: Record<string, string | number | undefined>;
  signal?: AbortSignal;
  /** A conditional write: the version the change is based on, sent as `If-Match: "<version>"` (a 412 when it moved on). */
  ifMatch?: number;
}

/** Fills `{param}` placeholders of a Swagger-style path. */
export function fillPath(path: string, params: Record<string, string> = {}): string {
  return path.replace(/\{(\w+)\}/g, (_, k: string) => {
    const v = params[k];
    if (v === undefined) throw new Error(`missing path parameter ${k}`);
    return encodeURIComponent(v);
  });
}

/**
 * The web board's API client: calls only the operations of {@link endpoints} (checked
 * against the Swagger document by a test), sends the bearer token, and rotates the refresh token
 * as a real client does: refreshed shortly before expiry, and once more on a 401; a failed refresh
 * ends the session (`onSessionEnd`), which returns the page to the login form.
 */
export class Api {
  session: Session | null;
  onSessionEnd: () => void = () => {};
  private refreshing: Promise<boolean> | null = null;

  constructor(
    private readonly base = '',
    private readonly storage: SessionStore | null = (globalThis as { localStorage?: SessionStore }).localStorage ?? null,
  ) {
    this.session = this.load();
  }

  private load(): Session | null {
    try {
      const raw = this.storage?.getItem(SESSION_KEY);
      return raw ? (JSON.parse(raw) as Session) : null;
    } catch {
      return null;
    }
  }

  private save(session: Session | null): void {
    this.session = session;
    if (session) this.storage?.setItem(SESSION_KEY, JSON.stringify(session));
    else this.storage?.removeItem(SESSION_KEY);
  }

  private adopt(pair: TokenPair): Session {
    const s: Session = {
      accessToken: pair.accessToken,
      refreshToken: pair.refreshToken,
      expiresAt: Date.now() + pair.expiresIn * 1000,
      userId: pair.userId,
      userName: pair.userName,
    };
    this.save(s);
    return s;
  }

  /**
   * Forgets the tokens and tells the server, which revokes the refresh token's family (access
   * tokens expire on their own, docs/auth.md "Logout"); the page does not wait for that answer.
   */
  logout(): void {
    const refreshToken = this.session?.refreshToken;
    this.save(null);
    this.onSessionEnd();
    if (refreshToken) this.call('logout', { body: { refreshToken } }).catch(() => {});
  }

  /** Exchanges the refresh token for a new pair (single flight); false, and the session ends, when refused. */
  refresh(): Promise<boolean> {
    if (!this.session) return Promise.resolve(false);
    this.refreshing ??= (async () => {
      try {
        const pair = await this.call<TokenPair>('refresh', { body: { refreshToken: this.session!.refreshToken } });
        this.adopt(pair);
        return true;
      } catch {
        this.logout();
        return false;
      } finally {
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }

  /** The `Authorization` header value, refreshing first when the token is about to expire. */
  async authorization(): Promise<string | undefined> {
    if (this.session && this.session.expiresAt - Date.now() < REFRESH_EARLY_MS) await this.refresh();
    return this.session ? `Bearer ${this.session.accessToken}` : undefined;
  }

  /** The absolute or page-relative URL of a gateway path (the client's base + `path`). */
  url(path: string): string {
    return this.base + path;
  }

  /** One call of an {@link endpoints} row. Throws {@link ApiError} on a non-2xx answer. */
  async call<R>(name: EndpointName, opts: CallOptions = {}, retried = false): Promise<R> {
    const ep: Endpoint = endpoints[name];
    for (const k of Object.keys(opts.body ?? {})) {
      if (!ep.body?.includes(k)) throw new Error(`${name}: body field ${k} is not in the endpoint table`);
    }
    let url = this.base + fillPath(ep.path, opts.params);
    const q = Object.entries(opts.query ?? {}).filter(([, v]) => v !== undefined);
    for (const [k] of q) if (!ep.query?.includes(k)) throw new Error(`${name}: query field ${k} is not in the endpoint table`);
    if (q.length) url += `?${new URLSearchParams(q.map(([k, v]): [string, string] => [k, String(v)])).toString()}`;
    const headers: Record<string, string> = {};
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    if (opts.ifMatch !== undefined) headers['if-match'] = `"${opts.ifMatch}"`;
    if (!ep.public) {
      const auth = await this.authorization();
      if (!auth) throw new ApiError(401, { code: 'UNAUTHORIZED', message: 'Not logged in' });
      headers.authorization = auth;
    }
    const res = await fetch(url, {
      method: ep.method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: opts.signal,
    });
    const answer = jsonOf(await res.text());
    if (res.ok) {
      if (answer.json) return answer.value as R;
      throw new ApiError(res.status, { code: 'NOT_JSON', message: `The server answered ${res.status} with something other than JSON` });
    }
    if (res.status === 401 && !ep.public && !retried && this.session) {
      if (await this.refresh()) return this.call<R>(name, opts, true);
    }
    throw new ApiError(res.status, errorBodyOf(answer, res));
  }

  // ---- auth -------------------------------------------------------------------------------------
  async login(username: string, password: string): Promise<Session> {
    return this.adopt(await this.call<TokenPair>('login', { body: { username, password } }));
  }
  /** How one may sign in here: password and/or an identity provider (its name), docs/auth.md. */
  signInMethods(): Promise<{ password: boolean; oidc: { name: string } | null }> {
    return this.call('signInMethods');
  }
  /** Exchanges the one-time code of an identity provider sign-in (the URL fragment `oidc_code`) for a session. */
  async exchangeOidcCode(code: string): Promise<Session> {
    return this.adopt(await this.call<TokenPair>('oidcExchange', { body: { code } }));
  }
    register(username: string, password: string): Promise<{ userId: string; username: string }> {
    return this.call('register', { body: { username, password } });
  }

  // ---- boards -----------------------------------------------------------------------------------
  listBoards = () => this.call<BoardList>('listBoards');
  createBoard = (name: string, board_type: 'private' | 'shared') => this.call<Board>('createBoard', { body: { name, board_type } });
  getBoard = (boardId: string) => this.call<Board>('getBoard', { params: { boardId } });
  /** The board's people (owner and group members) as `{id, username}`. */
  boardMembers = (boardId: string) => this.call<BoardMember[]>('boardMembers', { params: { boardId } });
  /** Invites `username` to the board as `r` or `rw` (owner only); answers the board's people. */
  addBoardMember = (boardId: string, username: string, permission: 'r' | 'rw') =>
    this.call<BoardMember[]>('addBoardMember', { params: { boardId }, body: { username, permission } });
  updateBoardMember = (boardId: string, userId: string, permission: 'r' | 'rw') =>
    this.call<BoardMember[]>('updateBoardMember', { params: { boardId, userId }, body: { permission } });
  removeBoardMember = (boardId: string, userId: string) => this.call<BoardMember[]>('removeBoardMember', { params: { boardId, userId } });
  updateBoard = (boardId: string, body: { name?: string; columns?: ColumnInput[]; activeSprintId?: string }) =>
    this.call<Board>('updateBoard', { params: { boardId }, body });
  shareBoard = (boardId: string, group_id: string, permission: 'r' | 'rw') =>
    this.call<Board>('shareBoard', { params: { boardId }, body: { group_id, permission } });
  previewActions = (query: string) => this.call<Preview>('previewActions', { body: { query } });
  summary = (boardId: string, sprint: string, signal?: AbortSignal) =>
    this.call<Summary>('summary', { params: { boardId }, query: { sprint, preview: 3 }, signal });
  readColumn = (boardId: string, columnId: string, body: { sprint: string; filter?: string; page: number; page_size: number }) =>
    this.call<ColumnPage>('readColumn', { params: { boardId, columnId }, body });
  createCard = (boardId: string, title: string, column_id: string) =>
    this.call<Task>('createCard', { params: { boardId }, body: { title, column_id } });
  moveCard = (boardId: string, taskId: string, from_column_id: string, to_column_id: string, dry_run = false) =>
    this.call<MoveResult>('moveCard', { params: { boardId, taskId }, body: { from_column_id, to_column_id, dry_run } });

  // ---- tasks ------------------------------------------------------------------------------------
  getTask = (taskId: string) => this.call<TaskDetail>('getTask', { params: { taskId } });
  updateTask = (
    taskId: string,
    body: { title?: string; description?: string; status?: string; tags?: string[]; assignee?: string; kickoff?: string; deadline?: string },
  ) =>
    this.call<Task>('updateTask', { params: { taskId }, body });
  deleteTask = (taskId: string) => this.call<void>('deleteTask', { params: { taskId } });
  setMetadata = (taskId: string, key: string, value: unknown, ifMatch?: number) =>
    this.call<TaskDetail>('setMetadata', { params: { taskId }, body: { key, value }, ...(ifMatch !== undefined ? { ifMatch } : {}) });
  deleteMetadata = (taskId: string, key: string, ifMatch?: number) =>
    this.call<TaskDetail>('deleteMetadata', { params: { taskId, key }, ...(ifMatch !== undefined ? { ifMatch } : {}) });
  addNote = (taskId: string, content: string) => this.call<Note>('addNote', { params: { taskId }, body: { content } });
  queryTasks = (query: string, pageSize = 100) => this.call<TaskPage>('queryTasks', { body: { query, pageSize, view: 'lite' } });
  closeSprint = (sprintId: string, rollover?: string) =>
    this.call<CloseSprintResult>('closeSprint', { params: { sprintId }, body: rollover ? { rollover } : {} });

  // ---- planning and sprints ----------------------------------------------------------------------
  boardQuery = (boardId: string, query: string, page_size = 200) =>
    this.call<BoardTaskPage>('boardQuery', { params: { boardId }, body: { query, page: 1, page_size } });
  listSprints = (boardId: string, state: 'open' | 'closed' | 'all' = 'all') =>
    this.call<SprintSummary[]>('listSprints', { params: { boardId }, query: { state } });
  createBoardSprint = (boardId: string, body: { title: string; goal?: string; kickoff?: string; deadline?: string; start?: boolean }) =>
    this.call<Task>('createBoardSprint', { params: { boardId }, body });
  velocity = (boardId: string, last: number) => this.call<Velocity>('velocity', { params: { boardId }, query: { last } });
  startSprint = (sprintId: string) => this.call<StartSprintResult>('startSprint', { params: { sprintId }, body: {} });
  sprintReport = (sprintId: string) => this.call<SprintReport>('sprintReport', { params: { sprintId } });
  burndown = (sprintId: string) => this.call<Burndown>('burndown', { params: { sprintId } });

  // ---- flow reports (docs/flow.md; days are UTC `YYYY-MM-DD`, inclusive) ---------------------------
  flow = (boardId: string, from: string, to: string) => this.call<Flow>('flow', { params: { boardId }, query: { from, to } });
  cycleTime = (boardId: string, from: string, to: string) => this.call<CycleTime>('cycleTime', { params: { boardId }, query: { from, to } });

  // ---- custom fields (docs/custom-fields.md) ------------------------------------------------------
  /** The definitions of the board's scope (its group's, or its owner's for a private board). */
  listCustomFields = (boardId: string) => this.call<{ data: CustomField[] }>('listCustomFields', { query: { board_id: boardId } });
  createCustomField = (body: { key: string; name: string; type: string; options?: CustomFieldOption[]; group_id?: string }) =>
    this.call<CustomField>('createCustomField', { body });
  updateCustomField = (fieldId: string, body: { name?: string; options?: CustomFieldOption[] }) =>
    this.call<CustomField>('updateCustomField', { params: { fieldId }, body });
  deleteCustomField = (fieldId: string) => this.call<void>('deleteCustomField', { params: { fieldId } });

  // ---- groups -----------------------------------------------------------------------------------
  listGroups = () => this.call<Group[]>('listGroups');
  createGroup = (name: string) => this.call<Group>('createGroup', { body: { name } });
  addGroupMember = (groupId: string, user_id: string, role: 'member' | 'admin' = 'member') =>
    this.call<Group>('addGroupMember', { params: { groupId }, body: { user_id, role } });
}

