export { deepFreeze } from './freeze.js';
export { sameSecret } from './secrets.js';
