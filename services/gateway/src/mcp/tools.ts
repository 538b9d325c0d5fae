import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import { BoardsOps, EventsOps, LeasesOps, QueryOps, SprintsOps, TasksOps, type AnyOp } from '@app/shared/contracts';
import type { RouteSpec } from '../routes/route.js';

/*
 * The MCP tool set (docs/agents.md "Tools"): a small, curated list, each tool one route of the
 * route table and so one bus op. A tool's input schema is the route's own contract (path, query
 * and body schemas, flattened into one object) plus the HTTP headers a model cannot send
 * (`if_match`, `idempotency_key`); its description is written for a model.
 */

/** One curated tool: which op (through its route row) it calls, and how a model should use it. */
export interface ToolSpec {
  /** snake_case, unique. */
  name: string;
  title: string;
  /** Written for a model: when to use it, what it returns, what to pass. */
  description: string;
  op: AnyOp;
  /** Reads only (MCP `readOnlyHint`). */
  readOnly: boolean;
  /** May remove or overwrite data (MCP `destructiveHint`); only meaningful for writes. */
  destructive?: boolean;
  /** Takes `if_match`: the write happens only if the task is still at that version. */
  ifMatch?: boolean;
}

/** How a model writes queries: the shared paragraph of the query tools' descriptions. */
const QUERY_HELP =
  "Query language (read the resource bts://docs/query-language for every field and function): e.g. `status = 'todo' AND assignee = me()`, " +
  "`tags CONTAINS 'bug' ORDER BY updated_at DESC`, `app.sprint = activeSprint()` (on a board), `deadline < +7d`, `title ~ 'login'`. " +
  "Custom fields (`cf.priority`, …) compare by their type with the operators it has: read the resource bts://custom-fields for the keys, types and option ids.";

/** The curated tools, in the order they are listed. */
export const TOOLS: readonly ToolSpec[] = [
  {
    name: 'find_tasks', title: 'Find tasks', op: QueryOps.tasks, readOnly: true,
    description: `Finds the tasks you can see that match a query, a page at a time (\`page\`, \`page_size\` up to 200; \`view: "lite"\` leaves out descriptions). Returns {data, total, page, pageSize, totalPages}. ${QUERY_HELP} \`me()\` is you; here \`activeSprint()\` needs the board id: \`app.sprint = activeSprint('<board id>')\`.`,
  },
  {
    name: 'get_task', title: 'Get a task', op: TasksOps.get, readOnly: true,
    description: 'Reads one task by id with its notes and links. Its `version` is what update_task takes as `if_match`.',
  },
  {
    name: 'create_task', title: 'Create a task', op: TasksOps.create, readOnly: false,
    description: 'Creates a task (not on a board: use create_card for that). Pass `idempotency_key` (any unique string) so a retry after a timeout cannot create it twice. Returns the task.',
  },
  {
    name: 'update_task', title: 'Update a task', op: TasksOps.update, readOnly: false, destructive: true, ifMatch: true,
    description: 'Changes the fields you pass (title, description, status, assignee, tags, metadata, …). Pass `if_match` = the `version` you last read so you never overwrite someone else’s change (PRECONDITION_FAILED: re-read with get_task and retry). Custom fields in `metadata` (`cf.*`) take values of their type (resource bts://custom-fields: a select takes an option id); CUSTOM_FIELD_VALUE_INVALID names the field and its type. Returns the task.',
  },
  {
    name: 'add_note', title: 'Add a note', op: TasksOps.addNote, readOnly: false,
    description: 'Adds a markdown note to a task, e.g. what you did or why you stopped. Pass `idempotency_key` to make a retry safe.',
  },
  {
    name: 'list_boards', title: 'List boards', op: BoardsOps.list, readOnly: true,
    description: 'Lists the boards you can see: {owned_boards, shared_boards}, each with its columns (id, name, query). Start here to find a board and column id.',
  },
  {
    name: 'get_board', title: 'Get a board', op: BoardsOps.get, readOnly: true,
    description: 'Reads one board: its columns in order, each with its query (which cards it shows), the actions a move into or out of it applies, and its WIP limit; plus the board’s active sprint. Also available as the resource bts://boards/{boardId}/columns.',
  },
  {
    name: 'read_board', title: 'Read a board with its cards', op: QueryOps.boardTasks, readOnly: true,
    description: 'Reads a board with every column’s card count and first cards (`page_size` per column, 0 for counts only; `sprint: "active"` for the active sprint’s cards). Use read_column to page through one column.',
  },
  {
    name: 'read_column', title: 'Read a column’s cards', op: QueryOps.column, readOnly: true,
    description: `Reads one column’s cards in the column’s order, paged (\`page\`, \`page_size\`), optionally narrowed by \`filter\` (a query fragment, e.g. \`assignee = me()\`) and \`sprint\` (\`active\`, a sprint id, or \`all\`). ${QUERY_HELP}`,
  },
  {
    name: 'create_card', title: 'Create a card on a board', op: BoardsOps.createTask, readOnly: false,
    description: 'Creates a task on a board; with `column_id` it starts in that column (the column’s actions set its fields). Pass `idempotency_key` to make a retry safe. Returns the task.',
  },
  {
    name: 'move_card', title: 'Move a card', op: BoardsOps.move, readOnly: false, destructive: true,
    description: 'Moves a card from one column to another on a board, applying the columns’ actions (e.g. status, tags). `from_column_id` must be the column it is in now (else KANBAN_TASK_NOT_IN_SOURCE_COLUMN with the card’s current state). `dry_run: true` shows what would change and writes nothing. Returns {task, applied_actions}.',
  },
  {
    name: 'claim_card', title: 'Claim a card', op: LeasesOps.claim, readOnly: false,
    description: 'Takes the first card of a column (in the column’s order, optionally only cards matching `query`, e.g. `assignee = me() OR assignee IS NULL`) that nobody holds, and leases it to you for `lease_seconds` (1–3600). Returns {lease_id, expires_at, task}, or null when no card is free. Work on it, renew_lease before it expires, then complete_card (or release_card to give it back). Two agents never get the same card.',
  },
  {
    name: 'renew_lease', title: 'Renew a lease', op: LeasesOps.renew, readOnly: false,
    description: 'Extends the lease you hold on a card (`lease_id` from claim_card) to `lease_seconds` from now. Fails with LEASE_EXPIRED or LEASE_NOT_HELD when you lost it: stop working on that card.',
  },
  {
    name: 'complete_card', title: 'Complete a claimed card', op: LeasesOps.complete, readOnly: false,
    description: 'Finishes a card you hold: ends the lease and, with `to_column_id`, moves the card there from the column it was claimed from (the columns’ actions apply, as in move_card). Returns {task, applied_actions}.',
  },
  {
    name: 'release_card', title: 'Release a claimed card', op: LeasesOps.release, readOnly: false,
    description: 'Gives back a card you hold without finishing it, so another agent can claim it. Returns the card.',
  },
  {
    name: 'list_sprints', title: 'List a board’s sprints', op: SprintsOps.list, readOnly: true,
    description: 'Lists the sprints of a board (`state`: open, closed or all) with their dates, goal and points.',
  },
  {
    name: 'sprint_report', title: 'Read a sprint report', op: SprintsOps.report, readOnly: true,
    description: 'Reads a sprint’s report: finished and unfinished items, points and velocity.',
  },
  {
    name: 'read_events', title: 'Read the change feed', op: EventsOps.feed, readOnly: true,
    description: 'Reads events you can see after a cursor (`after` = the previous `next_after`, `types` e.g. "card.moved,task.updated", `board_id`), oldest first: who changed what (`actor`, and `actor_token` for an access token). Returns {data, next_after}.',
  },
];

/** The MCP-only arguments: HTTP headers a model cannot send. */
const IfMatchArg = Type.Integer({ minimum: 0, description: 'the `version` of the task you last read; the write fails with PRECONDITION_FAILED if it changed since' });
const IdempotencyKeyArg = Type.String({
  minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$', description: 'any unique string (e.g. a UUID); a retry with the same key and arguments replays the first answer instead of writing twice',
});

/** Where one argument goes: a request part of the row under its HTTP name, or an MCP-only argument. */
export interface ArgumentTarget {
  part: 'params' | 'query' | 'body' | 'if_match' | 'idempotency_key';
  /** The field's name in the row's params, query or body (`boardId` for the argument `board_id`). */
  name: string;
}

/** A route row with the tool built on it. */
export interface BoundTool {
  spec: ToolSpec;
  row: RouteSpec;
  /**
   * The argument schema: the row's params, query and body properties, flattened, every name in
   * snake_case (docs/agents.md "Arguments"), each with a description, plus the MCP-only arguments.
   */
  input: TObject;
  /** Where each argument goes. */
  parts: Record<string, ArgumentTarget>;
  /** The result's schema (the row's success schema) when the tool answers an object: its `structuredContent`. */
  output?: TObject;
}

/** `boardId` → `board_id`, `pageSize` → `page_size`; snake_case stays as it is. */
export function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** Descriptions of arguments whose schema has none (the path ids, mostly), by argument name. */
const ARGUMENT_DESCRIPTIONS: Readonly<Record<string, string>> = {
  task_id: 'the task\'s id (the `id` of a task or card, e.g. from find_tasks or read_column)',
  board_id: 'the board\'s id (from list_boards)',
  column_id: 'the column\'s id (from get_board or list_boards)',
  sprint_id: 'the sprint\'s id (from list_sprints)',
};

/** An argument's description: its schema's own, else from {@link ARGUMENT_DESCRIPTIONS}, else from its name. */
function described(name: string, prop: TSchema): TSchema {
  if (typeof prop.description === 'string' && prop.description.length > 0) return prop;
  const text = ARGUMENT_DESCRIPTIONS[name] ?? (name.endsWith('_id') ? `the ${name.slice(0, -3).replace(/_/g, ' ')}'s id` : name.replace(/_/g, ' '));
  return { ...prop, description: text };
}

/** Per-tool wording of an argument where the row's schema says something else (a PATCH field is optional). */
const TOOL_ARGUMENT_DESCRIPTIONS: Readonly<Record<string, Record<string, string>>> = {
  update_task: { title: 'a new title, 1..500 characters after trimming; leave out to keep it' },
};

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Properties and required names of an object schema (none for another schema). */
function objectParts(s: TSchema | undefined): { props: Record<string, TSchema>; required: string[] } {
  if (!s || s.type !== 'object' || typeof s.properties !== 'object') return { props: {}, required: [] };
  return { props: s.properties as Record<string, TSchema>, required: Array.isArray(s.required) ? (s.required as string[]) : [] };
}

/**
 * Binds each tool to the row of its op in `routes`. Throws at start-up for a tool whose op has no
 * row, or for an argument name that two request parts share.
 */
export function bindTools(tools: readonly ToolSpec[], routes: readonly RouteSpec[]): BoundTool[] {
  return tools.map((spec) => {
    const row = routes.find((r) => r.op === spec.op);
    if (!row) throw new Error(`MCP tool ${spec.name}: no route serves ${spec.op.subject}`);
    const props: Record<string, TSchema> = {};
    const required: string[] = [];
    const parts: BoundTool['parts'] = {};
    const own = TOOL_ARGUMENT_DESCRIPTIONS[spec.name] ?? {};
    for (const [part, schema] of [['params', row.params], ['query', row.querystring], ['body', row.body]] as const) {
      const o = objectParts(schema);
      for (const [name, prop] of Object.entries(o.props)) {
        const arg = snakeCase(name);
        if (arg in props) throw new Error(`MCP tool ${spec.name}: argument ${arg} is in two request parts`);
        props[arg] = own[arg] ? { ...prop, description: own[arg] } : described(arg, prop);
        parts[arg] = { part, name };
      }
      required.push(...[...o.required, ...(part === 'params' ? Object.keys(o.props) : [])].map(snakeCase));
    }
    if (spec.ifMatch) {
      props.if_match = IfMatchArg;
      parts.if_match = { part: 'if_match', name: 'if_match' };
    }
    if (WRITES.has(row.method)) {
      props.idempotency_key = IdempotencyKeyArg;
      parts.idempotency_key = { part: 'idempotency_key', name: 'idempotency_key' };
    }
    const input = Type.Unsafe<Record<string, unknown>>({ type: 'object', properties: props, required: [...new Set(required)], additionalProperties: false }) as unknown as TObject;
    const response = row.response;
    const output = response && response.type === 'object' && !row.noContentWhenNull ? (response as TObject) : undefined;
    return { spec, row, input, parts, ...(output ? { output } : {}) };
  });
}
