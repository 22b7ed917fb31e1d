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

/**
 * Applies a PUT body (every mutable field) or a JSON Merge Patch to a resource's mutable
 * fields. A top-level null clears a field (sets it to null); nested objects merge (RFC 7396).
 */
export function mergeFields<T extends object>(current: T, patch: Partial<Record<keyof T, unknown>>): T {
  const out: Record<string, unknown> = { ...(current as Record<string, unknown>) };
  for (const [k, v] of Object.entries(patch)) {
    out[k] = v === null ? null : applyMergePatch((current as Record<string, unknown>)[k], v);
  }
  return out as T;
}
