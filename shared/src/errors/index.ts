export { ErrorCodes, isErrorCode, type ErrorCode } from './codes.js';
export { renderErrorsDoc } from './doc.js';
export { AppError, invalidField, type AppErrorOptions, type FieldError, type WireError } from './app-error.js';
export { legacyErrorBody, type ErrorEnvelope } from './legacy.js';
