/** RFC 7396 JSON Merge Patch: null removes, objects merge recursively, anything else replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const base: Record<string, unknown> =
    typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) delete base[k];
    else base[k] = applyMergePatch(base[k], v);
  }
  return base;
}

const REPLACES = Symbol('replaces');

/**
 * Marks a PUT body for `mergeFields`: each field it holds replaces the current one whole, an
 * object included (a PUT is the new state, RFC 9110: `limit_overrides: {}` leaves none). The
 * mark is an enumerable symbol key, so it survives a service's `{ password, ...fields }` and is
 * invisible to `Object.entries` and JSON.
 */
export const replacement = <T extends object>(body: T): T => ({ ...body, [REPLACES]: true });

/**
 * Applies a JSON Merge Patch (a top-level null clears a field; nested objects merge, RFC 7396) or
 * a PUT body marked by `replacement` (every field it holds replaces) to a resource's mutable fields.
 */
export function mergeFields<T extends object>(current: T, patch: Partial<Record<keyof T, unknown>>): T {
  const replaces = REPLACES in patch;
  const out: Record<string, unknown> = { ...(current as Record<string, unknown>) };
  for (const [k, v] of Object.entries(patch)) {
    out[k] = v === null || replaces ? v : applyMergePatch((current as Record<string, unknown>)[k], v);
  }
  return out as T;
}
