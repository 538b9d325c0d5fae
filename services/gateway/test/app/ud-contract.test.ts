import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv, type ValidateFunction } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { system, type Answer, type System, type User } from './system.js';

/*
 * ud's published contract, checked the way a ud client meets this service: one server URL ending
 * in `/api/v1`, the Swagger paths appended to it (auth included), every answer's status and body
 * validated against the operation's response schema in ud's published Swagger 2.0 (an excerpt of
 * it is kept with this test in `fixtures/ud-openapi.json`).
 *
 * The test walks the Swagger's operations, so every operation in it is either checked here or
 * named in NOT_IMPLEMENTED (asserted unserved, so the list shrinks as operations land). A
 * deliberate difference is asserted as such and must be explained in docs/compat.md.
 */

const REPO = fileURLToPath(new URL('../../../../', import.meta.url));

/**
 * ud's published Swagger 2.0, the excerpt kept with this test (fixtures/README.md: its source,
 * commit and counts). Read while the file is collected: a missing fixture fails the run.
 */
const UD_SWAGGER_TEXT = readFileSync(fileURLToPath(new URL('./fixtures/ud-openapi.json', import.meta.url)), 'utf8');

// ---- what is known not to conform (each entry is asserted, so it fails once it is out of date) -----

/**
 * Operations and features of ud's Swagger this service does not serve yet. Each is asserted to be
 * unserved: remove the entry (and add a case to CASES) when it lands.
 * Keys: `METHOD /path` (an operation), `METHOD /path ?param` (a query parameter of one),
 * `METHOD /path .field` (a response field the service knows but does not return yet).
 */
const NOT_IMPLEMENTED: ReadonlySet<string> = new Set([]);

/**
 * Deliberate differences, each explained in docs/compat.md under the same key (the test checks
 * the key appears there) and asserted by the test as the behaviour that differs.
 */
const DELIBERATE: Readonly<Record<string, string>> = {
  'GET /todolist': 'not served: deprecated in ud, not in SPEC; clients list tasks with POST /todolist/query',
  'kanban 401': 'the kanban operations carry no `security` in ud\'s Swagger; here every /api/v1 route needs the bearer token (docs/architecture.md §5), so they also answer 401, in the kanban error shape',
  'POST /auth/register 401': 'a missing or wrong invite code (with INVITE_CODE set) answers 403 REGISTRATION_DISABLED, as /auth/v2/register does; nothing here answers 401',
  'POST /todolist/{id}/restore 400': 'a task that is not deleted has nothing to restore: 404 TASK_NOT_FOUND, as for a task the caller may not write (never revealing which)',
};


// ---- the Swagger document ------------------------------------------------------------------------

type Schema = Record<string, unknown>;
interface Parameter { in: string; name: string; schema?: Schema; required?: boolean }
interface Operation {
  security?: unknown[];
  deprecated?: boolean;
  parameters?: Parameter[];
  responses: Record<string, { schema?: Schema }>;
}
interface SwaggerDoc { paths: Record<string, Record<string, Operation>> }

/** One operation of the Swagger: `METHOD /path`, its definition and its path parameters. */
interface Op { key: string; method: string; path: string; def: Operation; family: 'auth' | 'kanban' | 'todolist' }

function operationsOf(doc: SwaggerDoc): Op[] {
  const ops: Op[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, def] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const family = path.startsWith('/auth/') ? 'auth' : path.startsWith('/kanban/') ? 'kanban' : 'todolist';
      ops.push({ key: `${method.toUpperCase()} ${path}`, method: method.toUpperCase(), path, def, family });
    }
  }
  return ops;
}

// ---- requests --------------------------------------------------------------------------------------

/** A request as a ud client sends it: Swagger path parameters, query, JSON body and the caller. */
interface Req {
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  /** Who calls; `null` sends no Authorization header. Default: alice. */
  as?: User | null;
}

/** Shared state of the run: the system, two users, a group of both and a board alice shares with it. */
interface Fixture {
  sys: System;
  alice: User;
  bob: User;
  password: string;
  groupId: string;
  /** A board of alice's shared with the group (`r`), with a column naming two tags. */
  boardId: string;
  /** Creates a task through the target path and returns it. */
  task(body?: Record<string, unknown>): Promise<any>;
}

/** How one operation is checked: a valid request, and the error requests generic probes cannot build. */
interface Case {
  /** A valid request (it may create what it needs first). */
  success(f: Fixture): Promise<Req>;
  /** Requests provoking a documented error status, where the generic probe does not fit. */
  errors?: Partial<Record<number, (f: Fixture) => Promise<Req>>>;
  /** Fields of the success body (by `.path`, `[]` for every element) the service must return. */
  fields?: string[];
  /** Behaviour beyond the schema that the case pins (e.g. the linked items are there to be checked). */
  check?(body: any, f: Fixture): void;
  /** Query parameters of the Swagger this case exercises: name → a probe returning what is wrong (empty: fine). */
  queryParams?: Record<string, (p: ParamProbe) => Promise<string[]>>;
}

/** What a query-parameter probe works with. */
interface ParamProbe {
  f: Fixture;
  /** A fresh valid request (from the case's `success`). */
  base: Req;
  send(req: Req): Promise<Answer>;
  /** The schema of the operation's success answer. */
  successSchema: Schema;
  /** What is wrong with `value` against `schema` (empty: it validates). */
  validate(schema: Schema, value: unknown): string[];
}

/** The boards alice sees and their versions, to check that a request wrote nothing. */
async function boardsSnapshot(f: Fixture): Promise<string> {
  const list = await f.sys.call('GET', '/api/v1/boards', f.alice);
  return JSON.stringify([...list.body.owned_boards, ...list.body.shared_boards].map((b: any) => [b.id, b.version]).sort());
}

/**
 * `?dry_run=true` on board create and update: 200 `{dry_run: true, board}` with the board as it
 * would be (a `BoardResponse`), and nothing written.
 */
async function dryRunProbe(p: ParamProbe): Promise<string[]> {
  const before = await boardsSnapshot(p.f);
  const res = await p.send({ ...p.base, query: { dry_run: 'true' } });
  const problems: string[] = [];
  if (res.status !== 200 || res.body?.dry_run !== true) problems.push(`?dry_run: expected 200 {dry_run: true, board}, got ${res.status} ${JSON.stringify(res.body)}`);
  else problems.push(...p.validate(p.successSchema, res.body.board).map((m) => `?dry_run board: ${m}`));
  if ((await boardsSnapshot(p.f)) !== before) problems.push('?dry_run wrote to the boards');
  return problems;
}

const TWO_TAG_QUERY = "status = 'todo' AND 'alpha' IN tags AND 'beta' IN tags";

/** Operation key → its case. Every implemented operation of the Swagger needs one. */
const CASES: Record<string, Case> = {
  'POST /auth/v2/login': {
    success: async (f) => ({ as: null, body: { username: f.alice.name, password: f.password } }),
    errors: { 401: async (f) => ({ as: null, body: { username: f.alice.name, password: 'not the password' } }) },
    fields: ['.accessToken', '.refreshToken', '.userId', '.userName', '.userRole', '.userEmail', '.userTimezone', '.userAvatarUrl'],
  },
  'POST /auth/refresh-token': {
    success: async (f) => {
      const tokens = await f.sys.call('POST', '/auth/v2/login', undefined, { username: f.alice.name, password: f.password });
      return { as: null, body: { refreshToken: tokens.body.refreshToken } };
    },
    errors: { 401: async () => ({ as: null, body: { refreshToken: 'not-a-refresh-token' } }) },
    fields: ['.accessToken', '.refreshToken'],
  },
  'GET /kanban/boards': {
    success: async () => ({}),
    fields: ['.owned_boards', '.shared_boards'],
  },
  'POST /kanban/boards': {
    success: async () => ({ body: { name: 'Contract board', board_type: 'private', columns: [{ name: 'Todo', query: TWO_TAG_QUERY }] } }),
    errors: { 400: async () => ({ body: { board_type: 'private' } }) },
    fields: ['.id', '.name', '.board_type', '.columns[].id', '.columns[].actions'],
    queryParams: { dry_run: dryRunProbe },
  },
  'POST /kanban/boards/preview-actions': {
    success: async () => ({ body: { query: TWO_TAG_QUERY } }),
    check: (body) => expect(body.actions.length).toBeGreaterThan(0),
  },
  'GET /kanban/boards/{id}': {
    success: async (f) => ({ params: { id: f.boardId } }),
    fields: ['.id', '.name', '.board_type', '.owner_id', '.created_at', '.updated_at', '.created_by', '.updated_by', '.is_active', '.group_id', '.group_permission', '.columns[].id', '.columns[].order'],
  },
  'PUT /kanban/boards/{id}': {
    success: async (f) => ({ params: { id: f.boardId }, body: { name: 'Contract board (renamed)' } }),
    queryParams: { dry_run: dryRunProbe },
    errors: {
      403: async (f) => ({ params: { id: f.boardId }, body: { name: 'Not yours' }, as: f.bob }),
    },
  },
  'DELETE /kanban/boards/{id}': {
    success: async (f) => ({ params: { id: (await f.sys.call('POST', '/api/v1/boards', f.alice, { name: 'Doomed', board_type: 'private' })).body.id } }),
  },
  'POST /kanban/boards/{id}/query': {
    success: async (f) => {
      await f.sys.call('POST', `/api/v1/boards/${f.boardId}/tasks`, f.alice, { title: 'On the board', status: 'todo', tags: ['alpha', 'beta'] });
      return { params: { id: f.boardId }, body: { query: "status = 'todo'", page: 1, page_size: 20 } };
    },
    check: (body) => expect(body.data.length).toBeGreaterThan(0),
  },
  'POST /kanban/boards/{id}/share': {
    success: async (f) => ({ params: { id: f.boardId }, body: { group_id: f.groupId, permission: 'r' } }),
  },
  'DELETE /kanban/boards/{id}/share': {
    success: async (f) => {
      const board = await f.sys.call('POST', '/api/v1/boards', f.alice, { name: 'Briefly shared', board_type: 'private' });
      await f.sys.call('POST', `/api/v1/boards/${board.body.id}/share`, f.alice, { group_id: f.groupId, permission: 'rw' });
      return { params: { id: board.body.id } };
    },
  },
  'POST /kanban/boards/{id}/tasks': {
    success: async (f) => {
      const origin = await f.task({ title: 'Origin' });
      return { params: { id: f.boardId }, body: { title: 'Card', status: 'todo', tags: ['alpha'], derived_from_id: origin.id, linked_to_ids: [origin.id] } };
    },
  },
  'POST /auth/register': {
    success: async () => ({ as: null, body: { username: `dana-${randomUUID().slice(0, 8)}`, password: 'correct horse battery', inviteCode: 'any', language: 'en' } }),
    fields: ['.username', '.timezone'],
  },
  'POST /kanban/boards/default': {
    success: async () => ({}),
    fields: ['.id', '.name', '.columns[].id', '.columns[].order', '.is_active', '.created_by'],
    check: (body, f) => expect(body.owner_id).toBe(f.alice.id),
  },
  'GET /kanban/boards/{id}/tasks': {
    success: async (f) => {
      await f.sys.call('POST', `/api/v1/boards/${f.boardId}/tasks`, f.alice, { title: 'In Doing', status: 'doing' });
      return { params: { id: f.boardId } };
    },
    fields: ['.board.id', '.board.columns[].id', '.column_counts', '.column_tasks'],
    check: (body) => {
      const doing = body.board.columns.find((c: { name: string }) => c.name === 'Doing').id;
      expect(body.column_counts[doing]).toBeGreaterThan(0);
      expect(body.column_tasks[doing].length).toBe(Math.min(20, body.column_counts[doing]));
    },
  },
  'POST /todolist/batch': {
    success: async (f) => ({ body: { ids: [(await f.task({ title: 'One' })).id, (await f.task({ title: 'Two' })).id, randomUUID()] } }),
    check: (body) => expect(body.items.map((t: { title: string }) => t.title)).toEqual(['One', 'Two']),
  },
  'POST /todolist/batch-update': {
    success: async (f) => ({ body: { ids: [(await f.task()).id, randomUUID()], updates: { status: 'done' } } }),
    check: (body) => expect(body).toMatchObject({ totalCount: 2, successCount: 1, failCount: 1 }),
  },
  'PATCH /todolist/batch-update-each': {
    success: async (f) => {
      const [a, b] = [await f.task(), await f.task()];
      return { body: { items: [{ id: a.id, description: 'see [[b]]', links_to: [b.id] }] } };
    },
    check: (body) => expect(body).toMatchObject({ totalCount: 1, successCount: 1 }),
  },
  'POST /todolist/batch-delete': {
    success: async (f) => ({ body: { ids: [(await f.task()).id] } }),
    check: (body) => expect(body).toMatchObject({ totalCount: 1, successCount: 1 }),
  },
  'POST /todolist/batch-transfer': {
    success: async (f) => ({ body: { ids: [(await f.task()).id], newOwnerId: f.bob.id } }),
    check: (body) => expect(body).toMatchObject({ totalCount: 1, successCount: 1 }),
  },
  'POST /todolist/batch-upsert': {
    success: async () => ({ body: { items: [{ title: 'Note', metadata: { obsidianPath: `notes/${randomUUID()}.md` } }] } }),
    check: (body) => expect(body).toMatchObject({ totalCount: 1, createdCount: 1 }),
  },
  'POST /todolist/{id}/check-in': {
    success: async (f) => ({ params: { id: (await f.task()).id } }),
    check: (body) => expect(body.checkInCount).toBe(1),
  },
  'POST /todolist/{id}/restore': {
    success: async (f) => {
      const t = await f.task({ title: 'Deleted' });
      await f.sys.call('DELETE', `/api/v1/tasks/${t.id}`, f.alice);
      return { params: { id: t.id } };
    },
    fields: ['.id', '.created_at', '.updated_by'],
  },
  'POST /todolist': {
    success: async () => ({ body: { title: 'A task', status: 'todo', tags: ['x'], metadata: { 'cf.priority': 'high' } } }),
  },
  'POST /todolist/query': {
    success: async (f) => {
      await f.task({ title: 'Findable', status: 'todo' });
      return { body: { query: "status = 'todo'", page: 1, pageSize: 20 } };
    },
    check: (body) => expect(body.data.length).toBeGreaterThan(0),
  },
  'GET /todolist/{id}': {
    success: async (f) => {
      const origin = await f.task({ title: 'Origin', description: 'first', tags: ['o'], metadata: { 'cf.size': 3 } });
      const other = await f.task({ title: 'Other', status: 'doing' });
      const made = await f.sys.call('POST', `/api/v1/boards/${f.boardId}/tasks`, f.alice, { title: 'Linked', derived_from_id: origin.id, linked_to_ids: [other.id] });
      await f.task({ title: 'Derived from it', derived_from_id: made.body.id });
      return { params: { id: made.body.id } };
    },
    fields: [
      '.derivedFrom', '.linkedTo[].id', '.linkedTo[].created_at', '.linkedTo[].updated_at',
      '.derivedFrom.created_at', '.derivedFrom.description', '.derivedFrom.tags', '.derivedFrom.metadata', '.subtasks[].id',
    ],
  },
  'POST /todolist/{id}': {
    success: async (f) => ({ params: { id: (await f.task({ title: 'To update' })).id }, body: { title: 'Updated', status: 'doing' } }),
  },
  'DELETE /todolist/{id}': {
    success: async (f) => ({ params: { id: (await f.task({ title: 'To delete' })).id } }),
  },
  'POST /todolist/{id}/close-sprint': {
    success: async (f) => ({ params: { id: (await f.task({ title: 'Sprint 1', metadata: { 'app.type': 'sprint' } })).id }, body: { rollover: 'backlog' } }),
    errors: { 400: async (f) => ({ params: { id: (await f.task({ title: 'Not a sprint' })).id }, body: { rollover: 'backlog' } }) },
  },
  'PATCH /todolist/{id}/metadata': {
    success: async (f) => ({ params: { id: (await f.task({ title: 'Meta' })).id }, body: { key: 'order', value: 3 } }),
  },
  'DELETE /todolist/{id}/metadata/{key}': {
    success: async (f) => ({ params: { id: (await f.task({ title: 'Meta', metadata: { order: 1 } })).id, key: 'order' } }),
  },
};

/** `/api/v1` + the Swagger path with `params` filled in, plus the query string. */
function urlOf(op: Op, req: Req): string {
  const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(req.params?.[name] ?? ''));
  const qs = new URLSearchParams(req.query ?? {}).toString();
  return `/api/v1${path}${qs ? `?${qs}` : ''}`;
}

function send(f: Fixture, op: Op, req: Req): Promise<Answer> {
  const as = req.as === undefined ? f.alice : (req.as ?? undefined);
  return f.sys.call(op.method, urlOf(op, req), as, req.body);
}

/** A body the operation's body schema rejects: `{}` when it has required fields, else a string field sent as a number. */
function brokenBody(op: Op, valid: unknown): unknown {
  const schema = op.def.parameters?.find((p) => p.in === 'body')?.schema;
  if (!schema) return undefined;
  if (Array.isArray(schema.required) && schema.required.length > 0) return {};
  const props = (schema.properties ?? {}) as Record<string, Schema>;
  const name = Object.keys(props).find((k) => props[k]!.type === 'string');
  return name ? { ...(valid as object), [name]: 12345 } : undefined;
}

// ---- validation ------------------------------------------------------------------------------------

const ajv = new Ajv({ strict: false, allErrors: true });
ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) });
const compiled = new WeakMap<Schema, ValidateFunction>();

function validatorOf(schema: Schema): ValidateFunction {
  let v = compiled.get(schema);
  if (!v) compiled.set(schema, (v = ajv.compile(schema)));
  return v;
}

/** What is wrong with `value` against `schema` (empty: it validates). */
function schemaProblems(schema: Schema, value: unknown): string[] {
  const validate = validatorOf(schema);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} (${JSON.stringify(value).slice(0, 300)})`);
}

/** What is wrong with `answer` as the answer `status` of `op` (empty: it conforms). */
function problemsOf(op: Op, expected: number, answer: Answer): string[] {
  const where = `${op.key} → ${answer.status}`;
  if (answer.status !== expected) return [`${where}: expected status ${expected}, body ${JSON.stringify(answer.body)}`];
  const documented = op.def.responses[String(answer.status)];
  const schema = documented ? documented.schema : errorSchemaOf(op);
  if (!documented && !(answer.status === 401 && op.family === 'kanban')) return [`${where}: status not in ud's Swagger`];
  if (!schema) return answer.body === undefined ? [] : [`${where}: expected no body, got ${JSON.stringify(answer.body)}`];
  return schemaProblems(schema, answer.body).map((m) => `${where}: ${m}`);
}

/** The error schema an operation documents for its other error statuses (kanban: a string map). */
function errorSchemaOf(op: Op): Schema | undefined {
  for (const [status, r] of Object.entries(op.def.responses)) if (Number(status) >= 400 && r.schema) return r.schema;
  return op.family === 'kanban' ? { type: 'object', additionalProperties: { type: 'string' } } : undefined;
}

/** Values at `.a.b[].c` in `body` (a missing step yields nothing). */
function valuesAt(body: unknown, path: string): unknown[] {
  let current: unknown[] = [body];
  for (const step of path.split('.').slice(1)) {
    const each = step.endsWith('[]');
    const name = each ? step.slice(0, -2) : step;
    const next: unknown[] = [];
    for (const v of current) {
      if (typeof v !== 'object' || v === null || !(name in v)) continue;
      const value = (v as Record<string, unknown>)[name];
      if (each) { if (Array.isArray(value)) next.push(...value); } else next.push(value);
    }
    current = next;
  }
  return current;
}

// ---- the run ---------------------------------------------------------------------------------------

describe("ud's published Swagger, at the legacy paths under /api/v1", () => {
  let doc: SwaggerDoc;
  let ops: Op[];
  let f: Fixture;

  beforeAll(async () => {
    doc = (await SwaggerParser.dereference(JSON.parse(UD_SWAGGER_TEXT))) as unknown as SwaggerDoc;
    ops = operationsOf(doc);
    const sys = await system();
    const alice = await sys.user('alice');
    const bob = await sys.user('bob');
    const group = await sys.call('POST', '/api/v1/groups', alice, { name: 'crew' });
    await sys.call('POST', `/api/v1/groups/${group.body.id}/members`, alice, { user_id: bob.id });
    const board = await sys.call('POST', '/api/v1/boards', alice, {
      name: 'Contract board', board_type: 'shared', default_tags: [], columns: [{ name: 'Todo', query: TWO_TAG_QUERY }, { name: 'Doing', query: "status = 'doing'" }],
    });
    expect(board.status, JSON.stringify(board.body)).toBe(201);
    const shared = await sys.call('POST', `/api/v1/boards/${board.body.id}/share`, alice, { group_id: group.body.id, permission: 'r' });
    expect(shared.status, JSON.stringify(shared.body)).toBe(200);
    f = {
      sys, alice, bob, password: 'correct horse battery', groupId: group.body.id, boardId: board.body.id,
      async task(body = {}) {
        const made = await sys.call('POST', '/api/v1/tasks', alice, { title: 'Task', ...body });
        expect(made.status, JSON.stringify(made.body)).toBe(201);
        return made.body;
      },
    };
  });
  afterAll(async () => {
    await f?.sys[Symbol.asyncDispose]();
  });

  it('the excerpt is the one its x-excerpt describes (paths, operations, definitions) and every list here names real operations', () => {
    const raw = JSON.parse(UD_SWAGGER_TEXT) as { paths: object; definitions: object; 'x-excerpt': { counts: Record<string, number> } };
    expect(raw['x-excerpt'].counts).toEqual({ paths: 24, operations: 32, definitions: 53 });
    expect(Object.keys(raw.paths).length).toBe(raw['x-excerpt'].counts.paths);
    expect(ops.length).toBe(raw['x-excerpt'].counts.operations);
    expect(Object.keys(raw.definitions).length).toBe(raw['x-excerpt'].counts.definitions);
    const opKeys = new Set(ops.map((o) => o.key));
    for (const key of [...NOT_IMPLEMENTED, ...Object.keys(CASES)]) {
      const opKey = key.replace(/ [?.].*$/, '');
      expect(opKeys.has(opKey), `${key} names no operation of the Swagger`).toBe(true);
    }
  });

  it('every operation is checked here or listed as not implemented', () => {
    const missing = ops.filter((o) => !CASES[o.key] && !NOT_IMPLEMENTED.has(o.key) && !(o.key in DELIBERATE)).map((o) => o.key);
    expect(missing, 'add a case to CASES for each').toEqual([]);
    const both = ops.filter((o) => NOT_IMPLEMENTED.has(o.key) && o.key in DELIBERATE).map((o) => o.key);
    expect(both, 'an operation is either not implemented yet or deliberately not served, not both').toEqual([]);
  });

  it('docs/compat.md has a row for every operation and explains every deliberate difference', () => {
    const compat = readFileSync(join(REPO, 'docs', 'compat.md'), 'utf8');
    for (const key of Object.keys(DELIBERATE)) expect(compat, `docs/compat.md must explain \`${key}\``).toContain(`\`${key}\``);
    for (const o of ops) expect(compat, `docs/compat.md's table must have a row for ${o.key}`).toContain(`| \`${o.key}\` |`);
  });

  it('operations listed as not implemented are not served (remove them from the list as they land)', () => {
    for (const key of [...NOT_IMPLEMENTED].filter((k) => !/ [?.]/.test(k))) {
      const [method, path] = key.split(' ') as [string, string];
      const url = `/api/v1${path.replace(/\{([^}]+)\}/g, ':$1')}`;
      expect(f.sys.app.hasRoute({ method: method as 'GET', url }), `${key} is served now: remove it from NOT_IMPLEMENTED`).toBe(false);
    }
  });

  it('`GET /todolist` (deprecated in ud) is deliberately not served', async () => {
    const res = await f.sys.call('GET', '/api/v1/todolist', f.alice);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 'NOT_FOUND', message: expect.any(String), traceId: expect.any(String) });
    expect(f.sys.app.hasRoute({ method: 'GET', url: '/api/v1/todolist' })).toBe(false);
  });

  // One test per implemented operation of the Swagger, in the document's order: the keys are read
  // from the file while the tests are collected, so an operation added to it gets its own test.
  const keys = operationsOf(JSON.parse(UD_SWAGGER_TEXT) as SwaggerDoc).map((o) => o.key);
  for (const key of keys) {
    const c = CASES[key];
    if (!c || NOT_IMPLEMENTED.has(key)) continue;
    it(`${key}: success and error answers validate against the Swagger`, async () => {
      const op = ops.find((o) => o.key === key)!;
      const problems: string[] = [];
      const success = Object.keys(op.def.responses).map(Number).find((s) => s >= 200 && s < 300)!;
      const req = await c.success(f);

      // The request itself is what a ud client may send.
      const bodySchema = op.def.parameters?.find((p) => p.in === 'body')?.schema;
      if (bodySchema && req.body !== undefined) {
        const v = validatorOf(bodySchema);
        expect(v(req.body), `the case's request body does not fit ud's Swagger: ${JSON.stringify(v.errors)}`).toBe(true);
      }

      const answer = await send(f, op, req);
      problems.push(...problemsOf(op, success, answer));
      if (answer.status === success) {
        c.check?.(answer.body, f);
        for (const field of c.fields ?? []) {
          const listed = NOT_IMPLEMENTED.has(`${key} ${field}`);
          const present = valuesAt(answer.body, field).length > 0;
          if (listed) expect(present, `${key} now returns ${field}: remove it from NOT_IMPLEMENTED`).toBe(false);
          else if (!present) problems.push(`${key}: the answer lacks ${field}`);
        }
      }

      // Query parameters the Swagger documents for the operation.
      for (const p of op.def.parameters ?? []) {
        if (p.in !== 'query') continue;
        const pkey = `${key} ?${p.name}`;
        const probe = c.queryParams?.[p.name];
        if (NOT_IMPLEMENTED.has(pkey)) {
          const withParam = await send(f, op, { ...(await c.success(f)), query: { [p.name]: 'true' } });
          expect(withParam.status === 200 && withParam.body?.[p.name] === true, `${pkey} is served now: remove it from NOT_IMPLEMENTED`).toBe(false);
        } else if (probe) {
          const successSchema = op.def.responses[String(success)]?.schema ?? {};
          problems.push(...(await probe({ f, base: await c.success(f), send: (r) => send(f, op, r), successSchema, validate: schemaProblems })).map((m) => `${pkey}: ${m}`));
        } else {
          problems.push(`${pkey}: no check of this query parameter (add one to the case's queryParams)`);
        }
      }

      // Error answers: 400, 401, 404 where the Swagger documents them (401 on kanban: deliberate).
      const documented = new Set(Object.keys(op.def.responses).map(Number));
      for (const status of [400, 401, 403, 404]) {
        const special = c.errors?.[status];
        let probe: Req | undefined;
        if (special) probe = await special(f);
        else if (!documented.has(status) && !(status === 401 && op.family === 'kanban')) continue;
        else if (status === 401) probe = op.family === 'auth' ? undefined : { ...(await c.success(f)), as: null };
        else if (status === 404) {
          const base = await c.success(f);
          if (!op.path.includes('{')) continue;
          probe = { ...base, params: Object.fromEntries(Object.keys(base.params ?? {}).map((k) => [k, randomUUID()])) };
        } else if (status === 400) {
          const base = await c.success(f);
          const body = brokenBody(op, base.body);
          probe = body === undefined ? undefined : { ...base, body };
        }
        if (!probe) {
          if (status !== 403 && !(`${key} ${status}` in DELIBERATE)) problems.push(`${key} ${status}: no way to provoke it (add one to the case's errors)`);
          continue;
        }
        problems.push(...problemsOf(op, status, await send(f, op, probe)));
      }

      expect(problems).toEqual([]);
    });
  }
});
