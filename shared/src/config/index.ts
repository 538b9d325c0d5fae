export { loadConfig, ConfigError, CommonConfig } from './load-config.js';
