export { openConnections, serveServices, resolveJwtSecret, onShutdown, runServiceProcess, type Connections } from './process.js';
