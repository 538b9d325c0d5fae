export {
  openConnections, serveServices, startupIndexes, resolveJwtSecret, onShutdown, runServiceProcess, type Connections,
  StartupError, startupFailureMessage, exitOnStartupError, guardStartup, checkSeparateProcessStore,
  startObservability, type Observability,
} from './process.js';
