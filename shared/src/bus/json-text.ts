/**
 * A reply already serialized: `json` is exactly the text `JSON.stringify` gives for a value of the
 * op's response type `T`. A handler may return one instead of the value; the dispatch step
 * ({@link encodeOk} in dispatch.ts) puts `json` into the reply envelope as it is, where it would
 * otherwise run `JSON.stringify` on the value. For replies serialized once and stored (a closed
 * sprint's report and velocity entries) or assembled from memoized pieces (a task detail,
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

/**
 * `JSON.stringify(encode(doc))`, memoized per object for frozen objects: a frozen object cannot
 * change, so its text is its content's. Stores that hand out their stored documents frozen and
 * replace them on every write (the embedded store, docs/store.md) make repeated reads of the same
 * version hit; other objects (projections, MongoDB's fresh documents) are encoded each time, so
 * the memo is never stale whatever the backend. Keeps the last `max` texts (oldest dropped first).
 * Used to assemble {@link EncodedJson} replies from per-document pieces (a task detail, a page of
 * tasks: docs/bench.md "GET detail and text search").
 */
export class FrozenJsonMemo<D extends object> {
  private readonly texts = new Map<D, string>();

  constructor(
    private readonly encode: (doc: D) => unknown,
    /** How many texts are kept (about 1 KB each for a task). */
    readonly max = 4096,
  ) {}

  /** The JSON text of `encode(doc)`. */
  json(doc: D): string {
    if (!Object.isFrozen(doc)) return JSON.stringify(this.encode(doc));
    let json = this.texts.get(doc);
    if (json === undefined) {
      json = JSON.stringify(this.encode(doc));
      this.texts.set(doc, json);
      if (this.texts.size > this.max) this.texts.delete(this.texts.keys().next().value!);
    }
    return json;
  }
}
