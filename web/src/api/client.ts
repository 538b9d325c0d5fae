import { endpoints, type Endpoint, type EndpointName } from './endpoints.js';
import { CODE_SENTENCES, fieldSentence, queryMessage, statusSentence } from './humane.js';
import type { Answer, TypedOptions } from './typed.js';
import type {
  CustomField, CustomFieldOption, Board, BoardList, CycleTime, Flow, BoardMember, BoardTaskPage, Burndown, CloseSprintResult, SprintReport, SprintSummary, StartSprintResult, Velocity, ColumnInput, ColumnPage, ErrorBody, Group, MoveResult, Note, Preview, Summary, Task,
  TaskDetail, TaskPage, TokenPair, AccessToken, CreatedAccessToken,
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
 * Codes whose server message names only what the user typed ("No user is called “nobody”"), so
 * it is shown as it is; every other code is said with the page's own sentence
 * ({@link CODE_SENTENCES}), which never carries an id.
 */
const SERVER_WORDS_KEPT = new Set(['USER_NOT_FOUND', 'USERNAME_TAKEN']);

/**
 * The text a page shows for a failed call, one sentence (web/src/api/humane.ts): for a
 * `VALIDATION_FAILED` the first field at fault named once ("Password must have at least 8
 * characters."), for a query-language error its message without the part label, for every other
 * code of the catalogue the page's sentence (docs/errors.md; a request that got no answer is
 * `NETWORK`: "The server cannot be reached…"), a proxy's answer by its status; anything else (a
 * bug in the page) a plain sentence, never a `TypeError`.
 */
export function errorText(err: unknown): string {
  if (!(err instanceof ApiError)) {
    if (isNetworkFailure(err)) return CODE_SENTENCES.NETWORK!;
    return 'Something went wrong in the page; reload it and try again.';
  }
  const first = err.body.validationErrors?.[0];
  if (first) return fieldSentence(first);
  if (err.code.startsWith('QUERY_')) return queryMessage(err.message);
  if (SERVER_WORDS_KEPT.has(err.code)) return err.message;
  if (/^HTTP_\d+$/.test(err.code)) return statusSentence(err.status);
  return CODE_SENTENCES[err.code] ?? (/[.?!]$/.test(err.message) ? err.message : `${err.message}.`);
}

/** True for what `fetch` throws when no answer came at all (stopped server, network down), not for an abort. */
export function isNetworkFailure(err: unknown): boolean {
  // the client turns fetch's own failure into `NETWORK`; a bare TypeError of fetch's wording may still come from a direct fetch
  return (err instanceof ApiError && err.code === 'NETWORK') || (err instanceof TypeError && /fetch|network/i.test(err.message));
}

/** True when a failure means the server is out of reach: no answer, or a proxy's 502/503/504 in front of it. */
function isOutage(err: ApiError): boolean {
  return err.code === 'NETWORK' || (/^HTTP_\d+$/.test(err.code) && (err.status === 502 || err.status === 503 || err.status === 504));
}

/** Why a session ended: the user logged out, or the server refused to refresh it (revoked, expired, another secret). */
export type SessionEndReason = 'logout' | 'expired';

/**
 * Whether the server answers, as the client sees it (docs/web.md "Outages"): `online` after any
 * answer; `offline` after a request got none (or a proxy's 502/503/504), with the time of the
 * next check (`retryAt`, epoch ms) of a backoff of 1, 2, 4, 8, 16 then 30 s between checks of
 * `GET /health`.
 */
export type Connectivity = { state: 'online' } | { state: 'offline'; retryAt: number; attempts: number };

/** A timer that does not keep a Node process alive (tests); in the browser the id as it is. */
function unref<T>(t: T): T {
  (t as { unref?: () => void }).unref?.();
  return t;
}

/** Backoff between checks while offline (milliseconds): doubles from 1 s, at most 30 s. */
export function retryDelay(attempt: number): number {
  return Math.min(30_000, 1_000 * 2 ** Math.max(0, attempt));
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
  /** Called once when the session ends, with why (a refused refresh is `expired`). */
  onSessionEnd: (reason: SessionEndReason) => void = () => {};
  private refreshing: Promise<boolean> | null = null;
  private refreshTimer: ReturnType<typeof setTimeout> | undefined;
  /** Whether the server answers (see {@link Connectivity}); listeners hear every change. */
  connectivity: Connectivity = { state: 'online' };
  private readonly connectivityListeners = new Set<(c: Connectivity) => void>();
  private probeTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly base = '',
    private readonly storage: SessionStore | null = (globalThis as { localStorage?: SessionStore }).localStorage ?? null,
  ) {
    this.session = this.load();
    this.scheduleRefresh();
  }

  /**
   * Refreshes the access token {@link REFRESH_EARLY_MS} before it expires even while the page
   * makes no call (the event stream and the next click then find a live token); re-armed by every
   * new pair.
   */
  private scheduleRefresh(): void {
    clearTimeout(this.refreshTimer);
    if (!this.session) return;
    const wait = Math.max(0, this.session.expiresAt - Date.now() - REFRESH_EARLY_MS);
    this.refreshTimer = unref(setTimeout(() => void this.refresh(), Math.min(wait, 2 ** 31 - 1)));
  }

  /** Listens to connectivity changes; returns the unsubscribe. */
  onConnectivity(fn: (c: Connectivity) => void): () => void {
    this.connectivityListeners.add(fn);
    return () => this.connectivityListeners.delete(fn);
  }

  private setConnectivity(c: Connectivity): void {
    const was = this.connectivity.state;
    this.connectivity = c;
    if (c.state === 'online') clearTimeout(this.probeTimer);
    if (was === 'online' && c.state === 'online') return;
    for (const fn of this.connectivityListeners) fn(c);
  }

  /** A request got no answer: offline, and the next check after the backoff. */
  private wentOffline(): void {
    if (this.connectivity.state === 'offline') return;
    this.armProbe(0);
  }

  private armProbe(attempts: number): void {
    clearTimeout(this.probeTimer);
    const delay = retryDelay(attempts);
    this.setConnectivity({ state: 'offline', retryAt: Date.now() + delay, attempts });
    this.probeTimer = unref(setTimeout(() => void this.retryNow(), delay));
  }

  /**
   * Checks now whether the server answers (`GET /health`, no token): online when it does,
   * otherwise the next check after a longer wait. The outage banner's **Retry now** calls it.
   */
  async retryNow(): Promise<boolean> {
    clearTimeout(this.probeTimer);
    const attempts = this.connectivity.state === 'offline' ? this.connectivity.attempts + 1 : 0;
    try {
      const res = await fetch(this.base + '/health', { cache: 'no-store' } as RequestInit);
      if (res.status < 500) {
        this.setConnectivity({ state: 'online' });
        return true;
      }
    } catch {
      /* still out of reach */
    }
    this.armProbe(attempts);
    return false;
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
    this.scheduleRefresh();
    return s;
  }

  /**
   * Forgets the tokens and tells the server, which revokes the refresh token's family (access
   * tokens expire on their own, docs/auth.md "Logout"); the page does not wait for that answer.
   */
  logout(reason: SessionEndReason = 'logout'): void {
    const refreshToken = this.session?.refreshToken;
    clearTimeout(this.refreshTimer);
    this.save(null);
    this.onSessionEnd(reason);
    if (refreshToken) this.call('logout', { body: { refreshToken } }).catch(() => {});
  }

  /**
   * Exchanges the refresh token for a new pair (single flight); false, and the session ends
   * (`expired`), when the server refuses it. When the server cannot be reached the session is
   * kept (false, nothing ends): the refresh is tried again with the next call.
   */
  refresh(): Promise<boolean> {
    if (!this.session) return Promise.resolve(false);
    this.refreshing ??= (async () => {
      try {
        const pair = await this.call<TokenPair>('refresh', { body: { refreshToken: this.session!.refreshToken } });
        this.adopt(pair);
        return true;
      } catch (e) {
        if (e instanceof ApiError && isOutage(e)) return false;
        this.logout('expired');
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
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, {
        method: ep.method,
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        signal: opts.signal,
      });
      text = await res.text();
    } catch (e) {
      if (opts.signal?.aborted || (e instanceof DOMException && e.name === 'AbortError')) throw e;
      // no answer at all (`TypeError: Failed to fetch`): the server is stopped or out of reach
      this.wentOffline();
      throw new ApiError(0, { code: 'NETWORK', message: CODE_SENTENCES.NETWORK! });
    }
    const answer = jsonOf(text);
    if (res.status === 502 || res.status === 503 || res.status === 504) {
      if (!answer.json || errorBodyOf(answer, res).code.startsWith('HTTP_')) this.wentOffline();
      else this.setConnectivity({ state: 'online' });
    } else this.setConnectivity({ state: 'online' });
    if (res.ok) {
      if (answer.json) return answer.value as R;
      throw new ApiError(res.status, { code: 'NOT_JSON', message: `The server answered ${res.status} with something other than JSON` });
    }
    if (res.status === 401 && !ep.public && !retried && this.session) {
      if (await this.refresh()) return this.call<R>(name, opts, true);
    }
    throw new ApiError(res.status, errorBodyOf(answer, res));
  }

  /**
   * One call of an {@link endpoints} row typed by the OpenAPI document (api/typed.ts): its path
   * parameters, body and query as the document has them, its answer the document's success body.
   * Goes through {@link call} like every request.
   */
  op<N extends EndpointName>(name: N, opts: TypedOptions<N> = {}): Promise<Answer<N>> {
    return this.call<Answer<N>>(name, opts as CallOptions);
  }

  // ---- auth -------------------------------------------------------------------------------------
  async login(username: string, password: string): Promise<Session> {
    return this.adopt(await this.op('login', { body: { username, password } }));
  }
  /** How one may sign in here: password and/or an identity provider (its name), docs/auth.md. */
  signInMethods(): Promise<{ password: boolean; oidc: { name: string } | null }> {
    return this.op('signInMethods');
  }
  /** Exchanges the one-time code of an identity provider sign-in (the URL fragment `oidc_code`) for a session. */
  async exchangeOidcCode(code: string): Promise<Session> {
    return this.adopt(await this.op('oidcExchange', { body: { code } }));
  }
    register(username: string, password: string): Promise<{ userId: string; username: string }> {
    return this.op('register', { body: { username, password } });
  }

  // ---- boards -----------------------------------------------------------------------------------
  listBoards = () => this.op('listBoards');
  createBoard = (name: string, board_type: 'private' | 'shared', default_tags?: string[]) =>
    this.op('createBoard', { body: { name, board_type, ...(default_tags ? { default_tags } : {}) } });
  getBoard = (boardId: string) => this.op('getBoard', { params: { boardId } });
  /** The board's people (owner and group members) as `{id, username}`. */
  boardMembers = (boardId: string) => this.op('boardMembers', { params: { boardId } });
  /** Invites `username` to the board as `r` or `rw` (owner only); answers the board's people. */
  addBoardMember = (boardId: string, username: string, permission: 'r' | 'rw') =>
    this.op('addBoardMember', { params: { boardId }, body: { username, permission } });
  updateBoardMember = (boardId: string, userId: string, permission: 'r' | 'rw') =>
    this.op('updateBoardMember', { params: { boardId, userId }, body: { permission } });
  removeBoardMember = (boardId: string, userId: string) => this.op('removeBoardMember', { params: { boardId, userId } });
  updateBoard = (boardId: string, body: { name?: string; columns?: ColumnInput[]; activeSprintId?: string; default_tags?: string[] }) =>
    this.op('updateBoard', { params: { boardId }, body });
  shareBoard = (boardId: string, group_id: string, permission: 'r' | 'rw') =>
    this.op('shareBoard', { params: { boardId }, body: { group_id, permission } });
  previewActions = (query: string) => this.op('previewActions', { body: { query } });
  summary = (boardId: string, sprint: string, signal?: AbortSignal) =>
    this.op('summary', { params: { boardId }, query: { sprint, preview: 3 }, signal });
  readColumn = (boardId: string, columnId: string, body: { sprint: string; filter?: string; page: number; page_size: number }) =>
    this.op('readColumn', { params: { boardId, columnId }, body });
  createCard = (boardId: string, title: string, column_id: string) =>
    this.op('createCard', { params: { boardId }, body: { title, column_id } });
  moveCard = (boardId: string, taskId: string, from_column_id: string, to_column_id: string, dry_run = false) =>
    this.op('moveCard', { params: { boardId, taskId }, body: { from_column_id, to_column_id, dry_run } });

  // ---- tasks ------------------------------------------------------------------------------------
  getTask = (taskId: string) => this.op('getTask', { params: { taskId } });
  updateTask = (
    taskId: string,
    body: { title?: string; description?: string; status?: string; tags?: string[]; assignee?: string; kickoff?: string; deadline?: string },
  ) =>
    this.op('updateTask', { params: { taskId }, body });
  deleteTask = (taskId: string) => this.op('deleteTask', { params: { taskId } });
  setMetadata = (taskId: string, key: string, value: unknown, ifMatch?: number) =>
    this.op('setMetadata', { params: { taskId }, body: { key, value }, ...(ifMatch !== undefined ? { ifMatch } : {}) });
  deleteMetadata = (taskId: string, key: string, ifMatch?: number) =>
    this.op('deleteMetadata', { params: { taskId, key }, ...(ifMatch !== undefined ? { ifMatch } : {}) });
  addNote = (taskId: string, content: string) => this.op('addNote', { params: { taskId }, body: { content } });
  queryTasks = (query: string, pageSize = 100) => this.op('queryTasks', { body: { query, pageSize, view: 'lite' } });
  closeSprint = (sprintId: string, rollover?: string) =>
    this.op('closeSprint', { params: { sprintId }, body: rollover ? { rollover } : {} });

  // ---- planning and sprints ----------------------------------------------------------------------
  boardQuery = (boardId: string, query: string, page_size = 200) =>
    this.op('boardQuery', { params: { boardId }, body: { query, page: 1, page_size } });
  listSprints = (boardId: string, state: 'open' | 'closed' | 'all' = 'all') =>
    this.op('listSprints', { params: { boardId }, query: { state } });
  createBoardSprint = (boardId: string, body: { title: string; goal?: string; kickoff?: string; deadline?: string; start?: boolean }) =>
    this.op('createBoardSprint', { params: { boardId }, body });
  velocity = (boardId: string, last: number) => this.op('velocity', { params: { boardId }, query: { last } });
  startSprint = (sprintId: string) => this.op('startSprint', { params: { sprintId }, body: {} });
  sprintReport = (sprintId: string) => this.op('sprintReport', { params: { sprintId } });
  burndown = (sprintId: string) => this.op('burndown', { params: { sprintId } });

  // ---- flow reports (docs/flow.md; days are UTC `YYYY-MM-DD`, inclusive) ---------------------------
  flow = (boardId: string, from: string, to: string) => this.op('flow', { params: { boardId }, query: { from, to } });
  cycleTime = (boardId: string, from: string, to: string) => this.op('cycleTime', { params: { boardId }, query: { from, to } });

  // ---- custom fields (docs/custom-fields.md) ------------------------------------------------------
  /** The definitions of the board's scope (its group's, or its owner's for a private board). */
  listCustomFields = (boardId: string) => this.call<{ data: CustomField[] }>('listCustomFields', { query: { board_id: boardId } });
  createCustomField = (body: { key: string; name: string; type: string; options?: CustomFieldOption[]; group_id?: string }) =>
    this.call<CustomField>('createCustomField', { body });
  updateCustomField = (fieldId: string, body: { name?: string; options?: CustomFieldOption[] }) =>
    this.call<CustomField>('updateCustomField', { params: { fieldId }, body });
  deleteCustomField = (fieldId: string) => this.call<void>('deleteCustomField', { params: { fieldId } });

  // ---- groups -----------------------------------------------------------------------------------
  listGroups = () => this.op('listGroups');
  createGroup = (name: string) => this.op('createGroup', { body: { name } });
  addGroupMember = (groupId: string, user_id: string, role: 'member' | 'admin' = 'member') =>
    this.op('addGroupMember', { params: { groupId }, body: { user_id, role } });

  // ---- imports (docs/import-export.md; shapes in ImportPage.tsx) ----------------------------------
  startImport = <R>(body: { format: string; data: string; mapping?: Record<string, unknown>; dry_run?: boolean }) => this.call<R>('startImport', { body });
  getImport = <R>(importId: string) => this.call<R>('getImport', { params: { importId } });

  // ---- personal access tokens and leases (docs/auth.md "Access tokens", docs/boards.md "Claiming a card under a lease") ----
  /** The caller's tokens, oldest first, revoked ones included (never their secrets). */
  listTokens = () => this.call<AccessToken[]>('listTokens');
  /** Creates a token; its secret (`token`) is in this answer only. */
  createToken = (body: { name: string; scopes: string[]; board_ids?: string[]; expires_at?: string }) => this.call<CreatedAccessToken>('createToken', { body });
  /** Revokes a token: from its next request on it is refused. */
  revokeToken = (tokenId: string) => this.call<void>('revokeToken', { params: { tokenId } });
  /** Releases the lease `leaseId` on a card (its holder only; `LEASE_NOT_HELD` otherwise). */
  releaseLease = (taskId: string, leaseId: string) => this.call<Task>('releaseLease', { params: { taskId }, body: { lease_id: leaseId } });
}

