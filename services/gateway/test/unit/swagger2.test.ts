import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { swagger2Transform, toSwagger2Document, toSwagger2Schema } from '../../src/http/swagger2.js';

const plain = (s: unknown) => JSON.parse(JSON.stringify(s)) as unknown;

describe('Swagger 2.0 compat transform', () => {
  it('turns a union of literals into an enum', () => {
    const s = Type.Union([Type.Literal('private'), Type.Literal('shared')]);
    expect(plain(toSwagger2Schema(s))).toEqual({ type: 'string', enum: ['private', 'shared'] });
  });

  it('turns X | null into X with x-nullable', () => {
    const s = Type.Union([Type.String(), Type.Null()]);
    expect(plain(toSwagger2Schema(s))).toEqual({ type: 'string', 'x-nullable': true });
  });

  it('turns a record into additionalProperties of the value schema', () => {
    expect(plain(toSwagger2Schema(Type.Record(Type.String(), Type.Integer())))).toMatchObject({
      type: 'object',
      additionalProperties: { type: 'integer' },
    });
  });

  it('keeps object unions as x-anyOf and rewrites numeric exclusive bounds and examples', () => {
    const s = Type.Object({
      a: Type.Union([Type.Object({ x: Type.String() }), Type.Object({ y: Type.Number() })]),
      n: Type.Number({ exclusiveMinimum: 0, examples: [3] }),
    });
    const out = plain(toSwagger2Schema(s)) as { properties: Record<string, Record<string, unknown>> };
    expect(out.properties.a).toHaveProperty('x-anyOf');
    expect(out.properties.a).not.toHaveProperty('anyOf');
    expect(out.properties.n).toEqual({ type: 'number', minimum: 0, exclusiveMinimum: true, example: 3 });
  });

  it('rewrites route schemas in the per-route hook and parameters in the document hook', () => {
    const { schema } = swagger2Transform({ schema: { body: Type.Object({ t: Type.Literal('a') }) }, url: '/x' });
    expect(plain(schema)).toEqual({ body: { type: 'object', required: ['t'], properties: { t: { type: 'string', enum: ['a'] } } } });
    const doc = toSwagger2Document({
      paths: { '/x': { get: { parameters: [{ in: 'query', name: 'q', anyOf: [{ const: 1 }, { const: 2 }] }], responses: {} } } },
    });
    expect((doc.paths as Record<string, Record<string, { parameters: unknown[] }>>)['/x']!.get!.parameters[0]).toEqual({
      in: 'query',
      name: 'q',
      type: 'number',
      enum: [1, 2],
    });
  });
});
