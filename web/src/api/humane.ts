/**
 * One sentence a person reads for an error of the catalogue (docs/errors.md): a failed field check
 * names the field once in words ("Password must have at least 8 characters."), a query-language
 * error drops the part label and the position (the filter shows the position under the text
 * itself), and every other error is the catalogue's message.
 */

/** A field path of `validationErrors` (`/password`, `/columns/0/name`) as words: "Password", "Name of column 1". */
export function fieldName(path: string): string {
  const parts = path.split('/').filter(Boolean).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const words = (s: string) => s.replace(/^(app|cf)\./, '').replace(/[_.]+/g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  const item = (list: string, i: string) => `${words(list).replace(/s$/, '')} ${Number(i) + 1}`;
  const [a, b, c] = parts.slice(-3).reverse(); // last, its parent, the parent's parent
  let name: string;
  if (a === undefined) name = 'the request';
  else if (/^\d+$/.test(a) && b !== undefined) name = item(b, a);
  else if (b !== undefined && /^\d+$/.test(b) && c !== undefined) name = `${words(a)} of ${item(c, b)}`;
  else name = words(a);
  name = name.replace(/\bwip\b/, 'WIP');
  return name.charAt(0).toUpperCase() + name.slice(1);
}

/** The rule a field broke, as the end of a sentence ("must have at least 8 characters"). */
function rule(code: string, message: string): string {
  let m: RegExpMatchArray | null;
  if ((m = message.match(/^must NOT have fewer than (\d+) (characters|items)$/))) return m[1] === '1' ? 'must not be empty' : `must have at least ${m[1]} ${m[2]}`;
  if ((m = message.match(/^must NOT have more than (\d+) (characters|items)$/))) return `must have at most ${m[1]} ${m[2]}`;
  if ((m = message.match(/^must be (>=|<=|>|<) (-?[\d.]+)$/))) return `must be ${{ '>=': 'at least', '<=': 'at most', '>': 'more than', '<': 'less than' }[m[1]!]} ${m[2]}`;
  if ((m = message.match(/^must match format "(.+)"$/))) return `must be a valid ${m[1]!.replace('date-time', 'date and time')}`;
  if (code === 'type' && (m = message.match(/^must be (\w+)/))) return `must be ${{ string: 'text', integer: 'a whole number', number: 'a number', boolean: 'true or false', array: 'a list', object: 'an object' }[m[1]!] ?? m[1]}`;
  if (code === 'enum' || code === 'const' || code === 'anyOf') return 'is not one of the allowed values';
  return message.replace(/^must NOT/, 'must not');
}

/** A field error of a `VALIDATION_FAILED` answer as one sentence naming the field once. */
export function fieldSentence(e: { field: string; code?: string; message: string }): string {
  const required = e.message.match(/^must have required property '(.+)'$/);
  if (required) return `${fieldName(`${e.field}/${required[1]}`)} is required.`;
  if (e.message.match(/^must NOT have additional properties/)) return `${fieldName(e.field)} has a field it does not take.`;
  return `${fieldName(e.field)} ${rule(e.code ?? '', e.message)}.`;
}

/**
 * A query-language message without the part label (`Filter: `, `Column query: `) and the
 * "at position N" the page shows by itself, ending with a full stop.
 */
export function queryMessage(message: string): string {
  const m = message.replace(/^(Filter|Column query|Query): /, '').replace(/ at position \d+/, '').trim();
  return /[.?!]$/.test(m) ? m : `${m}.`;
}

/**
 * What the page says for each error code of the catalogue it can meet (docs/errors.md), in words
 * a person reads without an id in them: the server's own messages may name ids
 * ("no longer in column col-to-do"), so the page uses these instead. `NETWORK` is the page's own
 * code for a request that never got an answer (the server is stopped or unreachable). A code
 * missing here (a newer server) falls back to the server's message.
 */
export const CODE_SENTENCES: Readonly<Record<string, string>> = {
  NETWORK: 'The server cannot be reached; nothing was saved. Try again once it is back.',
  NOT_JSON: 'The server sent an answer the page cannot read; try again in a moment.',
  VALIDATION_FAILED: 'Some of what was entered is not valid.',
  BAD_REQUEST: 'The server could not read the request.',
  QUERY_SYNTAX: 'The query has a syntax error.',
  QUERY_OPERATOR_NOT_FOR_TYPE: 'That comparison does not apply to this field\'s type.',
  CUSTOM_FIELD_VALUE_INVALID: 'The value does not fit the field.',
  CUSTOM_FIELD_NOT_FOUND: 'This field no longer exists.',
  CUSTOM_FIELD_KEY_TAKEN: 'A field with this key exists already.',
  CUSTOM_FIELD_TYPE_CONFLICT: 'Some cards hold values the changed field cannot keep; change them first.',
  QUERY_TOO_COSTLY: 'The query would cost too much to run; narrow it (fewer wildcards, a shorter list, less nesting, or an earlier page).',
  QUERY_UNKNOWN_FIELD: 'The query names a field that does not exist.',
  QUERY_UNKNOWN_FUNCTION: 'The query calls a function that does not exist.',
  QUERY_FUNCTION_CONTEXT: 'activeSprint() needs a board here.',
  QUERY_TOO_LONG: 'The query is too long (at most 10,000 characters).',
  ASSIGNEE_NOT_FOUND: 'The assignee is not a known user.',
  NOT_A_SPRINT: 'That card is not a sprint.',
  SPRINT_NOT_STARTED: 'The sprint has not been started yet, so it has no burndown.',
  SPRINT_ROLLOVER_REQUIRED: 'The sprint has unfinished cards: choose where they go.',
  SPRINT_ROLLOVER_INVALID: 'The unfinished cards can only go to the backlog or another open sprint.',
  SPRINT_ALREADY_CLOSED: 'The sprint is already closed.',
  WEBHOOK_URL_REFUSED: 'That webhook address is not allowed.',
  UNAUTHORIZED: 'Your session ended — sign in again.',
  INVALID_CREDENTIALS: 'Wrong username or password.',
  OIDC_SIGN_IN_FAILED: 'The sign-in with the identity provider failed; try again.',
  OIDC_CODE_INVALID: 'The sign-in took too long or was already used; sign in again.',
  REFRESH_TOKEN_INVALID: 'Your session ended — sign in again.',
  FORBIDDEN: 'You may view this but not change it.',
  INSUFFICIENT_SCOPE: 'The access token does not allow this.',
  REGISTRATION_DISABLED: 'Registration is turned off on this server.',
  OIDC_DOMAIN_NOT_ALLOWED: 'Your e-mail domain may not sign in here.',
  LOCAL_LOGIN_DISABLED: 'Sign-in with a password is turned off; sign in with the identity provider.',
  ADMIN_ONLY: 'Only an administrator may do this.',
  NOT_GROUP_MEMBER: 'You are not a member of that group.',
  NOT_FOUND: 'The page asked for something the server does not have.',
  TASK_NOT_FOUND: 'The card no longer exists, or you may not see it.',
  BOARD_NOT_FOUND: 'The board no longer exists, or you may not see it.',
  COLUMN_NOT_FOUND: 'That column is no longer on the board; the board was changed elsewhere.',
  GROUP_NOT_FOUND: 'The group no longer exists, or you are not in it.',
  USER_NOT_FOUND: 'There is no user by that name.',
  METADATA_KEY_NOT_FOUND: 'The card no longer has that field.',
  VIEW_NOT_FOUND: 'The saved view no longer exists.',
  TOKEN_NOT_FOUND: 'The access token no longer exists.',
  WEBHOOK_NOT_FOUND: 'The webhook no longer exists.',
  DELIVERY_NOT_FOUND: 'The delivery no longer exists.',
  METHOD_NOT_ALLOWED: 'The server does not offer this here.',
  KANBAN_TASK_NOT_IN_SOURCE_COLUMN: 'The card changed elsewhere and is no longer in that column.',
  LEASE_NOT_HELD: 'You do not hold the claim on this card.',
  LEASE_EXPIRED: 'The claim on this card has expired.',
  USERNAME_TAKEN: 'That username is taken.',
  OIDC_USERNAME_TAKEN: 'An account with that username already exists and is not joined to your identity provider account.',
  WIP_LIMIT_REACHED: 'The column is at its WIP limit and takes no more cards.',
  CONFLICT: 'It changed elsewhere at the same time; try again.',
  IDEMPOTENCY_KEY_IN_PROGRESS: 'The same request is still running; wait a moment.',
  EVENTS_EXPIRED: 'Live updates fell too far behind; the page reads everything again.',
  PRECONDITION_FAILED: 'The card changed since the page read it; it now shows the latest version.',
  PAYLOAD_TOO_LARGE: 'That is too much text for one card.',
  KANBAN_TARGET_COLUMN_UNREACHABLE: 'The card would not belong in that column after the move.',
  IDEMPOTENCY_KEY_REUSED: 'The request was sent twice with different contents.',
  BATCH_ITEM_NOT_APPLIED: 'Nothing was applied because another part of the change failed.',
  TOO_MANY_STREAMS: 'Too many pages are open for live updates; the page refreshes every few seconds instead.',
  RATE_LIMITED: 'Too many requests in a short time; wait a moment and try again.',
  IMPORT_INVALID: 'The export has cards that cannot be imported; the dry run lists each problem.',
  IMPORT_TOO_MANY_CARDS: 'The export has more cards than one import takes; split it into smaller exports.',
  IMPORT_TOO_LARGE: 'The import file is too large.',
  IMPORT_NOT_FOUND: 'This import no longer exists.',
  BACKUP_NOT_SUPPORTED: 'This server is backed up by its database tools, not from here.',
  INTERNAL: 'The server failed; try again, and tell the administrator if it keeps happening.',
  OIDC_PROVIDER_UNAVAILABLE: 'The identity provider cannot be reached; try again later.',
  SERVICE_UNAVAILABLE: 'The server is busy or partly down; try again in a moment.',
  QUERY_TIMEOUT: 'The query took too long; narrow it and try again.',
  STORE_UNAVAILABLE: 'The server cannot reach its database; try again in a moment.',
  UPSTREAM_TIMEOUT: 'The server did not answer in time; try again in a moment.',
};

/** The page's sentence for an answer's status when no catalogue body came (`HTTP_<status>`, a proxy's page). */
export function statusSentence(status: number): string {
  if (status === 502 || status === 503 || status === 504) return CODE_SENTENCES.NETWORK!;
  if (status === 401) return CODE_SENTENCES.UNAUTHORIZED!;
  if (status === 403) return CODE_SENTENCES.FORBIDDEN!;
  if (status === 404) return CODE_SENTENCES.NOT_FOUND!;
  if (status === 429) return CODE_SENTENCES.RATE_LIMITED!;
  return status >= 500 ? CODE_SENTENCES.INTERNAL! : 'The server refused the request.';
}
