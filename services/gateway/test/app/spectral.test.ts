import { readFileSync, writeFileSync } from 'node:fs';
import spectralCore from '@stoplight/spectral-core';
import spectralParsers from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { allRoutes } from '../../src/index.js';
import { testApp } from './helpers.js';

const { Document, Spectral } = spectralCore;

/*
 * Both API documents, linted the way API tooling lints them: Stoplight Spectral's `spectral:oas`
 * ruleset (docs/http.md "Linting the documents"). Every error and every warning fails, with the
 * rule, the path in the document and the operation it belongs to.
 */

/** The project's ruleset (.spectral.yaml): `spectral:oas` and the rules it turns off, each with its reason. */
const RULESET = parse(readFileSync(new URL('../../../../.spectral.yaml', import.meta.url), 'utf8')) as { extends: string[]; rules: Record<string, unknown> };

type Doc = Record<string, unknown> & { paths: Record<string, Record<string, unknown>> };
let openapi: Doc;
let swagger: Doc;
beforeAll(async () => {
  await using t = await testApp({ routes: allRoutes });
  openapi = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json<Doc>();
  swagger = (await t.app.inject({ method: 'GET', url: '/api/v1/swagger.json' })).json<Doc>();
  // For a look at the served documents: SPECTRAL_DUMP=/tmp/docs- writes both.
  const dump = process.env.SPECTRAL_DUMP;
  if (dump) {
    writeFileSync(`${dump}openapi.json`, JSON.stringify(openapi, null, 2));
    writeFileSync(`${dump}swagger.json`, JSON.stringify(swagger, null, 2));
  }
});

/** Spectral's findings of severity error (0) or warning (1), one line each: `rule  path  (METHOD /path)  message`. */
async function lint(doc: Doc): Promise<string[]> {
  const spectral = new Spectral();
  expect(RULESET.extends).toEqual(['spectral:oas']);
  spectral.setRuleset({ extends: [[oas as never, 'recommended']], rules: RULESET.rules } as never);
  const results = await spectral.run(new Document(JSON.stringify(doc, null, 2), spectralParsers.Json, 'doc.json'));
  return results
    .filter((r) => r.severity <= 1)
    .map((r) => {
      const p = r.path.map(String);
      const where = p[0] === 'paths' && p.length >= 3 ? `  (${p[2]!.toUpperCase()} ${p[1]})` : '';
      return `${r.code}  ${p.join('.')}${where}  ${r.message}`;
    });
}

describe('the API documents under Spectral (spectral:oas)', () => {
  it('the OpenAPI 3.1 document has no error and no warning', async () => {
    const findings = await lint(openapi);
    expect(findings, `Spectral findings:\n${findings.join('\n')}`).toEqual([]);
  });

  it('the Swagger 2.0 document has no error and no warning', async () => {
    const findings = await lint(swagger);
    expect(findings, `Spectral findings:\n${findings.join('\n')}`).toEqual([]);
  });
});
