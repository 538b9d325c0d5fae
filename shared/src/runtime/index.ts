export {
  openConnections, serveServices, resolveJwtSecret, onShutdown, runServiceProcess, type Connections,
  StartupError, startupFailureMessage, exitOnStartupError, guardStartup, checkSeparateProcessStore,
} from './process.js';
