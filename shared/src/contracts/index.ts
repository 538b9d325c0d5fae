export { op, DEFAULT_TIMEOUT_MS, type Op, type AnyOp, type In, type Out } from './op.js';
export { HealthOps } from './health.js';
