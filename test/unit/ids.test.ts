import { TypeID } from 'typeid-js';
import { describe, expect, it } from 'vitest';
import { isId, newId } from '../../src/lib/ids.js';

describe('newId', () => {
  it('makes TypeIDs the reference implementation reads as UUIDv7 of now', () => {
    const before = Date.now();
    const id = newId('rec');
    const parsed = TypeID.fromString(id);
    expect(parsed.getType()).toBe('rec');
    const uuid = parsed.toUUID();
    expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const ms = parseInt(uuid.replace(/-/g, '').slice(0, 12), 16);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(Date.now() + 1);
    expect(isId('rec', id)).toBe(true);
    // The reference implementation encodes the same bytes to the same text.
    expect(TypeID.fromUUID('rec', uuid).toString()).toBe(id);
  });

  it('sorts in the order ids were made, within a millisecond and across many', () => {
    const ids = Array.from({ length: 20_000 }, () => newId('rec'));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });
});
