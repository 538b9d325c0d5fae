/**
 * The web board's API calls typed by the gateway's own OpenAPI 3.1 document (docs/web.md "Typed
 * API client"): `openapi.gen.ts` is generated from `GET /api/v1/openapi.json` at build time
 * (scripts/gen-api-types.mjs, openapi-typescript), and every row of {@link endpoints} is checked
 * against it here. A route the board calls that moves, loses a method, renames a body or query
 * field or changes an answer's shape fails the web app's `tsc`, naming the row.
 */
import type { paths } from './openapi.gen.js';
import type { endpoints, EndpointName } from './endpoints.js';

type Rows = typeof endpoints;
type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;

/** The generated operation of an {@link endpoints} row (its path and method). */
export type OperationOf<N extends EndpointName> = Rows[N]['path'] extends infer P extends keyof paths
  ? Lowercase<Rows[N]['method']> extends infer M extends keyof paths[P] ? paths[P][M] : never
  : never;

/**
 * The JSON body a row's success answers with: its 201 (a create; a dry run's 200 is another
 * answer), else its 200, else `undefined` (a 204).
 */
export type Answer<N extends EndpointName> = OperationOf<N> extends { responses: infer R }
  ? 201 extends keyof R ? Json<R[201]> : 200 extends keyof R ? Json<R[200]> : undefined
  : never;

/** The request body a row's operation takes. */
export type BodyOf<N extends EndpointName> = OperationOf<N> extends { requestBody?: infer B } ? Json<NonNullable<B>> : never;

/** The path parameters of a row's operation. */
export type PathParamsOf<N extends EndpointName> = OperationOf<N> extends { parameters: { path?: infer P } } ? NonNullable<P> : never;

/** The query-string parameters of a row's operation. */
export type QueryOf<N extends EndpointName> = OperationOf<N> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

/** The options of a typed call of row `N`: each part typed by the document. */
export interface TypedOptions<N extends EndpointName> {
  params?: PathParamsOf<N>;
  body?: BodyOf<N>;
  query?: QueryOf<N>;
  signal?: AbortSignal | undefined;
  /** A conditional write: `If-Match: "<version>"`. */
  ifMatch?: number;
}

/** Rows whose path and method the document does not have. */
type MissingOperation = { [N in EndpointName]: OperationOf<N> extends { responses: unknown } ? never : N }[EndpointName];
/** Rows naming a body field the document's request body does not have (`row: field`). */
type UnknownBodyField = {
  [N in EndpointName]: Rows[N] extends { body: readonly (infer F)[] } ? (Exclude<F, keyof BodyOf<N>> extends never ? never : `${N}: ${Exclude<F, keyof BodyOf<N>> & string}`) : never;
}[EndpointName];
/** Rows naming a query field the document's operation does not have. */
type UnknownQueryField = {
  [N in EndpointName]: Rows[N] extends { query: readonly (infer F)[] } ? (Exclude<F, keyof QueryOf<N>> extends never ? never : `${N}: ${Exclude<F, keyof QueryOf<N>> & string}`) : never;
}[EndpointName];

/**
 * Compiles only while every row matches the document; otherwise the error names what does not
 * (e.g. `Type 'true' is not assignable to type '"moveCard: to_column"'`).
 */
export const ROWS_MATCH_THE_DOCUMENT: [MissingOperation | UnknownBodyField | UnknownQueryField] extends [never] ? true : MissingOperation | UnknownBodyField | UnknownQueryField = true;
