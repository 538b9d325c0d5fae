/**
 * A reply already serialized: the JSON text of a value of the op's response type `T`. A handler
 * may return one instead of the value; the dispatch step puts `json` into the reply envelope as it
 * is, where it would otherwise run `JSON.stringify` on the value. It is meant for large replies
 * that never change, serialized once and stored (a closed sprint's report, issue 12): their
 * serialization was most of such a request's cost. Transport-free: it is the reply's data, as text.
 *
 * `json` is trusted: it must be one JSON value matching the op's response schema (it is not parsed
 * or checked). The op's `versionOf` is not applied to it, so ops whose replies carry a version
 * (an `ETag`) must return values.
 */
export class JsonText<T = unknown> {
  /** Type-level only: the response type the text encodes. */
  declare readonly __encodes?: T;

  constructor(
    /** The JSON text of the reply's data. */
    readonly json: string,
  ) {}
}

/** `new JsonText<T>(json)`: marks `json` as the serialized reply of type `T` (see {@link JsonText}). */
export function jsonText<T>(json: string): JsonText<T> {
  return new JsonText<T>(json);
}
