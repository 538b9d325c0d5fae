export { deepFreeze } from './freeze.js';
