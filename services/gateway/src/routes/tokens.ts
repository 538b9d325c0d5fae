import { Type } from '@sinclair/typebox';
import { AccessToken, CreatedAccessToken, TokenCreateBody, TokenParams } from '@app/shared/contracts';
import { AppError } from '@app/shared/errors';
import { gatewayAuditStamp } from '../auth/audit.js';
import { createAccessToken, listAccessTokens, revokeAccessToken } from '../auth/access-tokens.js';
import type { AccessClaims } from '../plugins/auth.js';
import { localRoute, type LocalRoute } from './local.js';
import type { RouteRequest } from './route.js';

/** The caller of an authenticated route (the auth hook ran before). */
function userOf(req: RouteRequest): AccessClaims {
  if (!req.user) throw new AppError('UNAUTHORIZED');
  return req.user;
}

/**
 * Personal access tokens (docs/auth.md "Access tokens"), answered by the gateway, which owns
 * them. With a token, these need the `admin` scope.
 */
export const tokenRoutes: LocalRoute[] = [
  localRoute({
    method: 'POST',
    url: '/api/v1/tokens',
    summary: 'Create a personal access token (`bts_…`, shown only in this answer) with scopes and optionally a list of boards',
    tag: 'tokens',
    authenticated: true,
    scope: 'admin',
    body: TokenCreateBody,
    response: CreatedAccessToken,
    status: 201,
    async handle(req, deps) {
      const user = userOf(req);
      return createAccessToken(deps.store, deps.clock, { userId: user.sub, username: user.name, grant: user.grant }, req.body, gatewayAuditStamp(req, deps, user.sub));
    },
  }),
  {
    method: 'GET',
    url: '/api/v1/tokens',
    summary: 'List your personal access tokens (never their secrets), oldest first',
    tag: 'tokens',
    authenticated: true,
    scope: 'admin',
    response: Type.Array(AccessToken),
    async handle(req, deps) {
      return listAccessTokens(deps.store, userOf(req).sub);
    },
  },
  {
    method: 'DELETE',
    url: '/api/v1/tokens/:tokenId',
    summary: 'Revoke a personal access token: from the next request on it is refused',
    tag: 'tokens',
    authenticated: true,
    scope: 'admin',
    params: TokenParams,
    status: 204,
    async handle(req, deps) {
      const tokenId = req.params.tokenId!;
      const userId = userOf(req).sub;
      await revokeAccessToken(deps.store, deps.clock, userId, tokenId, gatewayAuditStamp(req, deps, userId));
      deps.accessTokens.evict(tokenId);
      return undefined;
    },
  },
];
