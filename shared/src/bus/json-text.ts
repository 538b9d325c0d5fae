/**
 * A reply already serialized: `json` is exactly the text `JSON.stringify` gives for a value of the
 * op's response type `T`. A handler may return one instead of the value; the dispatch step
 * ({@link encodeOk} in dispatch.ts) puts `json` into the reply envelope as it is, where it would
 * otherwise run `JSON.stringify` on the value. For replies serialized once and stored (a closed
 * sprint's report and velocity entries, issue 12) or assembled from memoized pieces (a task detail,
 * a query page: the per-document JSON memo of the tasks and query services). Transport-free: it is
 * the reply's data, as text.
 *
 * `json` is trusted: it must be one JSON value matching the op's response schema (it is not parsed
 * or checked). The op's `versionOf` cannot read text, so `version` stands for it (the reply's
 * ETag); without one the reply carries no version.
 */
export class EncodedJson<T = unknown> {
  /** Type-level only: the response type the text encodes. */
  declare readonly __encodes?: T;

  constructor(
    /** The JSON text of the reply's data. */
    readonly json: string,
    /** The op's `versionOf` of the value, when it has one (the reply's `ETag`). */
    readonly version?: number,
  ) {}
}

/** `new EncodedJson<T>(json, version)`: marks `json` as the serialized reply of type `T` (see {@link EncodedJson}). */
export function jsonText<T>(json: string, version?: number): EncodedJson<T> {
  return new EncodedJson<T>(json, version);
}
