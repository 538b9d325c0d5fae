import { BUILTIN_FIELDS, FUNCTION_NAMES } from '@app/shared/query';

/**
 * The query language reference an MCP client reads as the resource `bts://docs/query-language`:
 * a model-sized summary of docs/query-language.md, with the field and function lists taken from
 * the query module itself so they cannot drift.
 */
export function queryLanguageReference(): string {
  return `# Task query language

A query selects tasks: \`[condition] [ORDER BY key [ASC|DESC], …]\` (no direction = DESC).
Keywords are case-insensitive; field names are case-sensitive. An empty query matches every task you can read.

## Fields
- Built-in: ${BUILTIN_FIELDS.map((f) => `\`${f}\``).join(', ')}.
- Metadata: \`app.<key>\` (e.g. \`app.sprint\`, \`app.points\`, \`app.type\`), \`cf.<key>\` (custom fields), \`metadata.<key>\`.
- \`tags\` is a list: \`tags CONTAINS 'bug'\`, \`'bug' IN tags\`, \`tags CONTAINS_ALL ('a', 'b')\`; \`tags = 'bug'\` means "has".
- \`assignee\`, \`created_by\`, \`updated_by\` hold user ids: compare them with \`me()\`.

## Conditions
- \`field = | != | < | <= | > | >= value\`; \`field [NOT] IN (v1, v2)\`; \`field BETWEEN a AND b\` (inclusive)
- \`field ~ 'text'\` / \`!~\` (case-insensitive contains); \`field [NOT] LIKE | ILIKE 'pat%'\` (\`%\`, \`_\` wildcards)
- \`field IS [NOT] NULL\`; combine with \`AND\`, \`OR\`, \`NOT\`, parentheses.
- Values: 'text' or "text", numbers, true/false, dates (ISO 8601, \`today\`, \`yesterday\`, \`tomorrow\`, \`now\`, relative \`+7d\`, \`-2w\`, \`+1m\`, \`-1y\`).

## Functions
${FUNCTION_NAMES.map((f) => `\`${f}()\``).join(', ')}.
- \`me()\`: your user id — \`assignee = me()\`.
- \`activeSprint()\`: the running sprint of the board the query runs on (column reads, board queries); anywhere else write \`activeSprint('<board id>')\` — \`app.sprint = activeSprint('b1')\`.
- \`openSprints()\` / \`closedSprints()\`: sprint ids, only after IN — \`app.sprint IN openSprints()\`.
- \`startOfDay()\`, \`startOfWeek()\`, \`startOfMonth()\`, \`endOfDay()\`, \`endOfWeek()\`, \`endOfMonth()\`, each with an optional shift: \`deadline <= endOfWeek(+1w)\`.

## Examples
- \`status = 'todo' AND assignee = me() ORDER BY deadline ASC\`
- \`tags CONTAINS 'bug' AND status != 'done'\`
- \`app.sprint = activeSprint('b1') AND assignee IS NULL\`
- \`updated_at >= -1d ORDER BY updated_at DESC\`

Errors are 400 with the position: QUERY_SYNTAX, QUERY_UNKNOWN_FIELD (with a suggestion), QUERY_UNKNOWN_FUNCTION, QUERY_FUNCTION_CONTEXT.
Check a query without running it through find_tasks with a small page, or read the board's columns (resource bts://boards/{boardId}/columns) to reuse their queries.
`;
}
