import { AuditPage, AuditQuerystring } from '@app/shared/contracts';
import { AppError } from '@app/shared/errors';
import { assertAdmin, readAudit } from '../auth/audit.js';
import { localRoute, type LocalRoute } from './local.js';

/** The audit log (docs/audit.md), answered by the gateway, which owns auth: administrators only. */
export const auditRoutes: LocalRoute[] = [
  localRoute({
    method: 'GET',
    url: '/api/v1/audit',
    summary: 'Read the audit log (administrators only): security-relevant actions, oldest first, filtered by actor, action and time, paged by `after`',
    tag: 'audit',
    authenticated: true,
    scope: 'admin',
    querystring: AuditQuerystring,
    response: AuditPage,
    async handle(req, deps) {
      if (!req.user) throw new AppError('UNAUTHORIZED');
      await assertAdmin(deps.store, deps.config, req.user.sub);
      return readAudit(deps.store, req.query);
    },
  }),
];
