export { createLogger, silentLogger, REDACT_PATHS, type Logger } from './logger.js';
