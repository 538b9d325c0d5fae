import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The web board (docs/web.md): built into web/dist, which the gateway serves at `/`.
// `npm run dev -w web` proxies the API to a gateway on localhost:8080.
const gateway = 'http://localhost:8080';
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', sourcemap: false, reportCompressedSize: true },
  server: { proxy: { '/api': gateway, '/auth': gateway, '/health': gateway, '/version': gateway } },
});
