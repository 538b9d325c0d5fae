export { deepFreeze } from './freeze.js';
export { sameSecret } from './secrets.js';
export { jsonBound, jsonBytes, jsonBytesOver } from './json-size.js';
export { inRequest, currentRequest, readTimeLeft, requestReadDeadline, type RequestScope } from './request-scope.js';
