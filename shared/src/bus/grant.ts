import { SCOPES, type Scope, type TokenGrant } from '../contracts/tokens.js';
import { currentRequest } from '../util/request-scope.js';

/*
 * The token grant of the request being handled (docs/auth.md "Access tokens"). The dispatch step
 * runs each handler in its request scope (`util/request-scope.ts`), so the access rules
 * (`loadPrincipal`, shared/src/domain/access.ts) narrow the caller to the token's boards without
 * every handler passing it on. Work started without a request (background relays, webhook
 * deliveries) sees none.
 */

/** The grant of the request this code runs for, or undefined (a JWT request, or no request). */
export function currentGrant(): TokenGrant | undefined {
  return currentRequest()?.grant;
}

/**
 * Wire headers of a grant: `x-token-id`, `x-token-scopes` (comma list), `x-token-boards` (comma
 * list, when narrowed), `x-token-name` (the token's name, URI-encoded).
 */
export const GrantHeaders = { tokenId: 'x-token-id', scopes: 'x-token-scopes', boards: 'x-token-boards', name: 'x-token-name' } as const;

/** A grant as wire header pairs (none for no grant). */
export function grantHeaders(grant: TokenGrant | undefined): Array<[string, string]> {
  if (grant === undefined) return [];
  const out: Array<[string, string]> = [[GrantHeaders.tokenId, grant.tokenId], [GrantHeaders.scopes, grant.scopes.join(',')]];
  if (grant.boardIds !== undefined) out.push([GrantHeaders.boards, grant.boardIds.join(',')]);
  if (grant.tokenName !== undefined) out.push([GrantHeaders.name, encodeURIComponent(grant.tokenName)]);
  return out;
}

/**
 * The grant a request's headers carry for user `userId` (`get` returns '' or undefined for a
 * missing header). Unknown scope names are dropped, so a garbled header grants less, never more.
 */
export function grantFrom(get: (name: string) => string | undefined, userId: string | undefined): TokenGrant | undefined {
  const tokenId = get(GrantHeaders.tokenId);
  if (!tokenId || userId === undefined) return undefined;
  const scopes = (get(GrantHeaders.scopes) ?? '').split(',').filter((s): s is Scope => (SCOPES as readonly string[]).includes(s));
  const boards = get(GrantHeaders.boards);
  const name = get(GrantHeaders.name);
  let tokenName: string | undefined;
  try {
    tokenName = name ? decodeURIComponent(name) : undefined;
  } catch {
    tokenName = undefined; // a garbled name is no name
  }
  return { tokenId, userId, scopes, ...(boards ? { boardIds: boards.split(',') } : {}), ...(tokenName ? { tokenName } : {}) };
}
