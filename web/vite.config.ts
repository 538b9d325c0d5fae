import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

/**
 * Writes `<file>.br` (brotli, quality 11) and `<file>.gz` (gzip, level 9) next to every built
 * JavaScript, CSS, HTML and SVG file of at least 1 KB: the gateway's `@fastify/static` sends them
 * by the request's Accept-Encoding (`preCompressed`), so the bundle is compressed once, at the
 * highest level, instead of on every request (docs/web.md "Bundle on the wire").
 */
function precompress(): Plugin {
  let outDir = '';
  return {
    name: 'board-precompress',
    apply: 'build',
    configResolved(config) {
      outDir = join(config.root, config.build.outDir);
    },
    writeBundle(_options, bundle) {
      for (const fileName of Object.keys(bundle)) {
        if (!/\.(js|css|html|svg)$/.test(fileName)) continue;
        const path = join(outDir, fileName);
        const data = readFileSync(path);
        if (data.length < 1024) continue;
        writeFileSync(`${path}.br`, brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: data.length } }));
        writeFileSync(`${path}.gz`, gzipSync(data, { level: 9 }));
      }
    },
  };
}

// The web board (docs/web.md): built into web/dist, which the gateway serves at `/`.
// `npm run dev -w web` proxies the API to a gateway on localhost:8080.
const gateway = 'http://localhost:8080';
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [precompress()],
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', sourcemap: false, reportCompressedSize: true },
  server: { proxy: { '/api': gateway, '/auth': gateway, '/health': gateway, '/version': gateway } },
});
