// Writes docs/errors.md from the error catalogue (shared/src/errors/codes.ts, via the build).
import { writeFileSync } from 'node:fs';
import { renderErrorsDoc } from '../shared/dist/errors/doc.js';
writeFileSync(new URL('../docs/errors.md', import.meta.url), renderErrorsDoc());
console.log('docs/errors.md written');
