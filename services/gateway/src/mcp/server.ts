import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import {
  CallToolRequestSchema, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, ListToolsRequestSchema, ReadResourceRequestSchema,
  type CallToolResult, type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { ValidateFunction } from 'ajv';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Bus, CallMeta } from '@app/shared/bus';
import { BoardsOps, CustomFieldsOps, scopeOf, scopesAllow, type Board } from '@app/shared/contracts';
import { AppError } from '@app/shared/errors';
import { TYPE_OPERATORS } from '@app/shared/query';
import type { Admission } from '../admission/admission.js';
import { fromValidation, toHttpError, type AjvIssue } from '../http/error-mapping.js';
import { strictBodies } from '../http/validators.js';
import type { AccessClaims } from '../plugins/auth.js';
import type { RouteSpec } from '../routes/route.js';
import { queryLanguageReference } from './query-reference.js';
import { bindTools, TOOLS, type BoundTool, type ToolSpec } from './tools.js';

/*
 * The MCP endpoint (docs/agents.md): a thin adapter from MCP to the route table. Each tool call is
 * one bus request to the tool's op, made as the authenticated caller with its token's grant, so the
 * services check scope, boards and access exactly as for HTTP. Stateless: every POST gets its own
 * MCP server and transport (the Streamable HTTP transport without sessions, JSON answers). The
 * adapter's own time in a POST (JSON-RPC handling, the SDK server, argument checks, result shaping
 * and output validation) is charged to the caller's cost budget beside the services' measured cost
 * of its bus requests (docs/http.md "Fair use").
 */

/** Name and version the server reports in `initialize`. */
export interface McpInfo {
  name: string;
  version: string;
}

/** URI of the query language reference resource. */
export const QUERY_LANGUAGE_URI = 'bts://docs/query-language';
/** URI template of a board's column definitions. */
export const BOARD_COLUMNS_TEMPLATE = 'bts://boards/{boardId}/columns';
const BOARD_COLUMNS = /^bts:\/\/boards\/([^/]+)\/columns$/;
/** The custom field definitions in the caller's reach (docs/custom-fields.md "For agents"). */
export const CUSTOM_FIELDS_URI = 'bts://custom-fields';

/**
 * The MCP adapter's own time in one POST: its wall time, less the time some bus request of it was
 * outstanding (overlapping requests counted once). The services charge their handler time in
 * each reply's `costMs`; this is the rest, spent in the gateway itself.
 */
class OwnTime {
  private readonly started = performance.now();
  /** Bus requests outstanding now, since `busFrom` (`performance.now()` ms). */
  private outstanding = 0;
  private busFrom = 0;
  /** Finished stretches with some bus request outstanding, ms. */
  private busMs = 0;

  /** Runs the bus request `request`, its wait not counted as the adapter's time. */
  async bus<T>(request: () => Promise<T>): Promise<T> {
    if (this.outstanding++ === 0) this.busFrom = performance.now();
    try {
      return await request();
    } finally {
      if (--this.outstanding === 0) this.busMs += performance.now() - this.busFrom;
    }
  }

  /** The adapter's own time so far, ms (never negative). */
  ownMs(): number {
    const now = performance.now();
    return Math.max(0, now - this.started - this.busMs - (this.outstanding > 0 ? now - this.busFrom : 0));
  }
}

/** What {@link McpEndpoint} takes besides its bus, routes and info. */
export interface McpOptions {
  /** The tools it serves (default {@link TOOLS}). */
  tools?: readonly ToolSpec[];
  /**
   * The gateway's admission (the one its admitted bus uses): each POST's own time is charged to
   * the caller's principal there. Without it, only the services' cost is charged.
   */
  admission?: Admission;
}

/** A tool bound to its row, with its argument validator compiled once. */
interface ReadyTool extends BoundTool {
  validate: ValidateFunction;
  listing: Tool;
}

/**
 * A contract schema as a tool lists it: plain JSON, without the `$id`s the contracts carry (a
 * client compiles each tool's schemas into one validator, where the same `$id` twice is an error).
 */
function plainSchema(s: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(s, (k, v: unknown) => (k === '$id' ? undefined : v))) as Record<string, unknown>;
}

/** The MCP `Tool` a client lists: name, description, JSON Schema input and the read-only and destructive hints. */
function listingOf(t: BoundTool): Tool {
  const { spec } = t;
  return {
    name: spec.name,
    title: spec.title,
    description: spec.description,
    inputSchema: plainSchema(t.input) as Tool['inputSchema'],
    ...(t.output ? { outputSchema: plainSchema(t.output) as Tool['outputSchema'] } : {}),
    annotations: {
      title: spec.title,
      readOnlyHint: spec.readOnly,
      ...(spec.readOnly ? {} : { destructiveHint: spec.destructive ?? false, idempotentHint: false }),
      openWorldHint: false,
    },
  };
}

/** An error as a tool result the model can read: the HTTP error body as JSON text. */
function errorResult(err: unknown, requestId: string): CallToolResult {
  const { body } = toHttpError(err, requestId);
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
}

/**
 * The MCP endpoint's tools and resources over `bus`: the curated {@link TOOLS} bound to `routes`
 * (plus `extra` tools, e.g. the lease tools), validated with the same rules as HTTP bodies.
 */
export class McpEndpoint {
  private readonly tools: ReadyTool[];
  /** The SDK's schema validator, shared by the per-request servers (each would otherwise build its own Ajv: milliseconds a request). */
  private readonly schemas = new AjvJsonSchemaValidator();
  private readonly admission: Admission | undefined;

  constructor(
    private readonly bus: Bus,
    routes: readonly RouteSpec[],
    private readonly info: McpInfo,
    options: McpOptions = {},
  ) {
    const ajv = strictBodies();
    this.admission = options.admission;
    this.tools = bindTools(options.tools ?? TOOLS, routes).map((t) => ({ ...t, validate: ajv.compile(t.input), listing: listingOf(t) }));
  }

  /** The tools `user` may call: all for a JWT, those within its scopes for an access token. */
  toolsFor(user: AccessClaims): ReadyTool[] {
    const grant = user.grant;
    return grant ? this.tools.filter((t) => scopesAllow(grant.scopes, scopeOf(t.row.op))) : this.tools;
  }

  /**
   * Answers one MCP POST (already authenticated) on the raw response. Once answered, the POST's
   * own time ({@link OwnTime}, ms) is charged to the caller's principal (its access token, else
   * the user) through {@link Admission.charge}.
   */
  async handle(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const own = new OwnTime();
    try {
      const server = this.serverFor(req.user, req.id, req.ip, own);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      reply.hijack();
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req.raw, reply.raw, req.body);
    } finally {
      const { admission } = this;
      if (admission !== undefined) {
        const s = admission.principalOf({ userId: req.user.sub, grant: req.user.grant });
        if (s !== undefined) admission.charge(s, own.ownMs());
      }
    }
  }

  /** The MCP server of one request, for `user`; its bus requests are timed by `own`. */
  private serverFor(user: AccessClaims, requestId: string, ip: string, own: OwnTime): Server {
    const server = new Server(this.info, { capabilities: { tools: {}, resources: {} }, jsonSchemaValidator: this.schemas });
    const tools = this.toolsFor(user);
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools.map((t) => t.listing) }));
    server.setRequestHandler(CallToolRequestSchema, async (r) => {
      const tool = tools.find((t) => t.spec.name === r.params.name);
      if (!tool) return errorResult(new AppError('NOT_FOUND', { message: `No tool ${r.params.name} is available to this caller` }), requestId);
      return this.call(tool, r.params.arguments ?? {}, user, requestId, ip, own);
    });
    server.setRequestHandler(ListResourcesRequestSchema, async () => ({
      resources: [
        { uri: QUERY_LANGUAGE_URI, name: 'query-language', title: 'Query language reference', mimeType: 'text/markdown', description: 'Fields, operators, dates and functions of task queries' },
        {
          uri: CUSTOM_FIELDS_URI, name: 'custom-fields', title: 'Custom fields in reach', mimeType: 'application/json',
          description: 'The typed cf.* fields defined for your tasks and your groups\' tasks: key, name, type, options (value = option id, in order), required, default, and the query operators of each type',
        },
      ],
    }));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
      resourceTemplates: [{
        uriTemplate: BOARD_COLUMNS_TEMPLATE, name: 'board-columns', title: 'A board’s columns', mimeType: 'application/json',
        description: 'The column definitions of a board: id, name, query, actions, WIP limit, in order',
      }],
    }));
    server.setRequestHandler(ReadResourceRequestSchema, async (r) => {
      const { uri } = r.params;
      if (uri === QUERY_LANGUAGE_URI) return { contents: [{ uri, mimeType: 'text/markdown', text: queryLanguageReference() }] };
      if (uri === CUSTOM_FIELDS_URI) {
        const fields = await own.bus(() => this.bus.request(CustomFieldsOps.list, {}, this.meta(user, requestId, ip)));
        return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(customFieldsOf(fields.data), null, 2) }] };
      }
      const boardId = BOARD_COLUMNS.exec(uri)?.[1];
      if (boardId === undefined) throw new Error(`Unknown resource ${uri}`);
      const board = await own.bus(() => this.bus.request(BoardsOps.get, { boardId: decodeURIComponent(boardId) }, this.meta(user, requestId, ip)));
      return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(columnsOf(board), null, 2) }] };
    });
    return server;
  }

  /** The bus meta of a call by `user` from client address `ip`: its id, its token's grant, and the address for the audit log. */
  private meta(user: AccessClaims, requestId: string, ip: string): CallMeta {
    return { requestId, userId: user.sub, sourceAddress: ip, ...(user.grant ? { grant: user.grant } : {}) };
  }

  /** One tool call: validate the arguments, split them into the row's request parts, one bus request (timed by `own`). */
  private async call(tool: ReadyTool, args: Record<string, unknown>, user: AccessClaims, requestId: string, ip: string, own: OwnTime): Promise<CallToolResult> {
    try {
      const input = structuredClone(args);
      if (!tool.validate(input)) throw argumentsError(tool, (tool.validate.errors ?? []) as AjvIssue[]);
      const parts = { params: {} as Record<string, string>, query: {} as Record<string, unknown>, body: {} as Record<string, unknown> };
      const meta = this.meta(user, requestId, ip);
      for (const [arg, value] of Object.entries(input)) {
        const target = tool.parts[arg];
        if (target === undefined) continue;
        const { part, name } = target;
        if (part === 'if_match') meta.ifMatch = `"${String(value)}"`;
        else if (part === 'idempotency_key') {
          meta.idempotencyKey = String(value);
          meta.idempotencyScope = `MCP ${tool.spec.name}`;
        } else if (part === 'params') parts.params[name] = String(value);
        else parts[part][name] = value;
      }
      const out = await own.bus(() => this.bus.requestReply(tool.row.op, tool.row.input({ ...parts, user }), meta));
      if (!out.ok) return errorResult(out.error, out.meta.traceId ?? requestId);
      if (!tool.output) return { content: [{ type: 'text', text: out.text }] };
      return { content: [{ type: 'text', text: out.text }], structuredContent: JSON.parse(out.text) as Record<string, unknown> };
    } catch (e) {
      return errorResult(e, requestId);
    }
  }
}

/**
 * A tool's argument validation failure: 400 `VALIDATION_FAILED` naming each argument at fault,
 * the message pointing at the tool's own `inputSchema` (tools/list), which lists every argument.
 */
function argumentsError(tool: ReadyTool, issues: AjvIssue[]): AppError {
  const e = fromValidation(issues, 'arguments');
  const unknownField = / \(see the Swagger schema\)$/;
  const validationErrors = (e.validationErrors ?? []).map((f) => ({ ...f, message: f.message.replace(unknownField, '') }));
  const first = validationErrors[0];
  const where = `see the inputSchema of ${tool.spec.name} in tools/list`;
  return new AppError('VALIDATION_FAILED', {
    message: first ? `arguments${first.field === '/' ? '' : first.field}: ${first.message} (${where})` : `arguments are invalid (${where})`,
    details: { in: 'arguments', tool: tool.spec.name },
    validationErrors,
  });
}

/** The custom fields resource: each definition with the operators its type takes in queries. */
function customFieldsOf(fields: ReadonlyArray<{ key: string; name: string; type: string } & Record<string, unknown>>): unknown {
  return {
    fields: fields.map(({ can_edit: _e, version: _v, created_at: _c, updated_at: _u, ...f }) => ({ ...f, operators: TYPE_OPERATORS[f.type as keyof typeof TYPE_OPERATORS] ?? [] })),
    note: 'Write a value of its type: a select holds one option id, a multi_select a list of them, a date YYYY-MM-DD, a datetime RFC 3339 with offset, a user a user id. A write with a value that does not fit is refused naming metadata.<key> and the type. Keys not listed here are free-form.',
  };
}

/** The column definitions of a board as the columns resource gives them. */
function columnsOf(board: Board): unknown {
  return { board_id: board.id, name: board.name, columns: board.columns };
}
