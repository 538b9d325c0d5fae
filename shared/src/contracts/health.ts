import { Type } from '@sinclair/typebox';
import { op } from './op.js';

const HealthReply = Type.Object({ status: Type.Literal('ok'), service: Type.String() });
const healthOp = (service: string) =>
  op({ subject: `${service}.health`, request: Type.Optional(Type.Object({})), response: HealthReply, timeoutMs: 2_000 });

/**
 * Health op of each bus service (`<service>.health`): answers `{status:'ok', service}` after a store
 * round trip. Served automatically for every service; used by compose health checks and readiness.
 */
export const HealthOps = {
  tasks: healthOp('tasks'),
  boards: healthOp('boards'),
  sprints: healthOp('sprints'),
  query: healthOp('query'),
} as const;
