/**
 * Freezes `value` and everything reachable from it, in place, and returns it: for trees that
 * callers share read-only (cached query trees, the embedded store's stored documents). A frozen
 * object is taken to be deeply frozen already (only this function freezes them), so freezing a
 * tree that holds frozen subtrees does not walk them again. Changing a frozen object throws a
 * TypeError in strict-mode code (all ESM is).
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  if (Array.isArray(value)) for (const v of value) deepFreeze(v);
  else for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  return value;
}
