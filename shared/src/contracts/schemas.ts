import { Kind, Type, TypeRegistry, type TObject, type TProperties, type TUnsafe } from '@sinclair/typebox';

/*
 * Schema helpers shared by the contract files. Everything here is Swagger-2.0-safe (no unions,
 * nullables or tuples: docs/architecture.md §11) so route rows can use the same schemas as the bus.
 */

TypeRegistry.Set<{ enum: string[] }>('StringEnum', (schema, value) => typeof value === 'string' && schema.enum.includes(value));

/**
 * A string restricted to `values`, written as plain `{type: 'string', enum}` so it stays
 * Swagger-2.0-safe (no union); the bus validator checks it through a registered TypeBox kind.
 */
export function StringEnum<const T extends string[]>(values: T, opts: { description?: string; default?: T[number] } = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...opts, [Kind]: 'StringEnum', type: 'string', enum: values });
}

/** Highest page number accepted: far past any real list, and inside every backend's skip range. */
export const MAX_PAGE = 1_000_000;
/** Page number, 1-based, 1..{@link MAX_PAGE} (docs/architecture.md §6 "Pages"); outside → 400. */
export const Page = Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1, description: '1-based page number, at most 1,000,000' });
/** Page size 1..200, default 20; outside that → 400, never clamped (docs/architecture.md §6). */
export const PageSize = Type.Integer({ minimum: 1, maximum: 200, default: 20, description: 'items per page, 1..200' });

/** A non-empty id path parameter (`boardId`, `columnId`, `groupId`, …). Not a UUID check: an unknown id is a 404. */
export const PathId = Type.String({ minLength: 1 });

/** Tags as a client sends them: non-empty strings; duplicates are dropped by the write. */
export const Tags = Type.Array(Type.String({ minLength: 1 }), { description: 'duplicates are dropped' });

/** Deepest nesting of one metadata value: a scalar is 0 levels, `{"a":{"b":1}}` is 2. */
export const METADATA_MAX_DEPTH = 32;
/** Longest metadata value, as the bytes (UTF-8) of its JSON text. */
export const METADATA_VALUE_MAX_BYTES = 64 * 1024;
/** Longest metadata key, in characters (docs/tasks.md "Limits"). */
export const METADATA_KEY_MAX = 256;
/**
 * Schema keyword carrying the metadata limits ({@link METADATA_MAX_DEPTH},
 * {@link METADATA_VALUE_MAX_BYTES}, {@link METADATA_KEY_MAX}): `'object'` checks every key and value of a metadata object,
 * `'value'` the value itself. The gateway's validator enforces it (a 400 naming
 * `/metadata/<key>`); Swagger shows it as a vendor extension; the bus validator ignores it.
 */
export const METADATA_LIMITS_KEYWORD = 'x-metadata-limits';

/**
 * A free-form metadata object (keys may contain dots, values any JSON within the metadata
 * limits); `description` for Swagger.
 */
export const MetadataObject = (description?: string) =>
  Type.Object({}, { additionalProperties: true, [METADATA_LIMITS_KEYWORD]: 'object', ...(description === undefined ? {} : { description }) });

/** One metadata value as a client sends it: any JSON within the metadata limits. */
export const MetadataValue = (description: string) => Type.Unknown({ description, [METADATA_LIMITS_KEYWORD]: 'value' });

/** An ISO 8601 UTC timestamp as returned (`toISOString()`). */
export const Timestamp = Type.String({ format: 'date-time' });

/**
 * A bus request: path parameters plus the HTTP body's (or query string's) properties, without
 * `additionalProperties: false`, so the bus ignores unknown fields (the gateway decides which
 * reach it: docs/http.md).
 */
export function busRequest<P extends TProperties, B extends TProperties = {}>(params: P, body?: B): TObject<P & B> {
  return Type.Object({ ...params, ...body } as P & B);
}
