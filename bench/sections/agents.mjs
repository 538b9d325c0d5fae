// Section `agents`: the MCP tool `find_tasks` beside the same query over REST, on the all-in-one
// server with a personal access token (docs/agents.md): what the MCP adapter (JSON-RPC, argument
// validation, a server per stateless request) costs on top of the one bus request both make.
import { http, JWT_SECRET, measure, pairedRatio, row, TABLE_HEAD, target } from '../lib.mjs';

/** Tasks seeded; half are assigned to the caller and open, so the query has a full first page. */
const TASKS = 400;
const QUERY = { query: "assignee = me() AND status = 'todo' ORDER BY updated_at DESC", pageSize: 20, view: 'lite' };

export async function agentsSection(scope) {
  const dir = scope.tempDir('bench-agents-');
  // the per-token rate limit would cap the load runs: lifted for the bench
  const aio = await scope.process('bench/servers/all-in-one.mjs', { env: { DATA_DIR: dir, JWT_SECRET, RATE_LIMIT_TOKEN_MAX: '1000000000' } });
  const base = `http://127.0.0.1:${aio.info.port}`;
  await http(base, 'POST', '/auth/v2/register', { body: { username: 'agent-owner', password: 'bench password 1' } });
  const login = (await http(base, 'POST', '/auth/v2/login', { body: { username: 'agent-owner', password: 'bench password 1' } })).json;
  for (let i = 0; i < TASKS; i++) {
    const mine = i % 2 === 0;
    await http(base, 'POST', '/api/v1/tasks', { token: login.accessToken, body: { title: `Task ${i}`, status: mine ? 'todo' : 'doing', ...(mine ? { assignee: login.userId } : {}) } });
  }
  const token = (await http(base, 'POST', '/api/v1/tokens', { token: login.accessToken, body: { name: 'bench', scopes: ['read'] } })).json.token;
  const headers = { authorization: `Bearer ${token}` };
  const rest = { url: `${base}/api/v1/tasks/query`, method: 'POST', body: JSON.stringify(QUERY), headers };
  const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'find_tasks', arguments: QUERY } };
  const mcp = { url: `${base}/mcp`, method: 'POST', body: JSON.stringify(call), headers: { ...headers, accept: 'application/json, text/event-stream' } };

  // both answer the same page before anything is measured
  const viaRest = (await http(base, 'POST', '/api/v1/tasks/query', { token, body: QUERY })).json;
  const res = await fetch(mcp.url, { method: 'POST', body: mcp.body, headers: { ...mcp.headers, 'content-type': 'application/json' } });
  const viaMcp = JSON.parse((await res.json()).result.content[0].text);
  if (viaRest.data.length !== 20 || JSON.stringify(viaMcp.data) !== JSON.stringify(viaRest.data)) throw new Error('MCP find_tasks and the REST query disagree');

  const { restRun, mcpRun } = await measure({ restRun: rest, mcpRun: mcp });
  const ratio = pairedRatio(mcpRun, restRun);
  const latency = pairedRatio(mcpRun, restRun, 'p50Runs');
  return [
    `${TASKS} tasks, the query \`${QUERY.query}\` (page of 20, lite), read-only access token, c=10.`,
    '',
    TABLE_HEAD,
    row('REST POST /api/v1/tasks/query', restRun, restRun),
    row('MCP tools/call find_tasks', mcpRun, restRun),
    '',
    `MCP ÷ REST: req/s ${ratio.text}; p50 latency ${latency.text}.`,
    target(ratio.value >= 0.5, 'MCP find_tasks ≥ 0.5× the REST query (req/s, c=10)', ratio.text),
  ];
}
