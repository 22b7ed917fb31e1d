import { describe, expect, it } from 'vitest';
import { encodeCursor, withCursor } from '../../src/http/pagination.js';

describe('the next page link', () => {
  const next = encodeCursor('dom_01m8amsvwhe6kad5cfxy1cc9av');

  it('appends the cursor to a first page as it was asked for', () => {
    expect(withCursor('/v1/domains', next)).toBe(`/v1/domains?cursor=${next}`);
    expect(withCursor('/v1/domains?', next)).toBe(`/v1/domains?cursor=${next}`);
    expect(withCursor('/v1/domains?limit=50&status=active', next)).toBe(`/v1/domains?limit=50&status=active&cursor=${next}`);
  });

  it('replaces the cursor of a later page, wherever it stands, and keeps the other parameters', () => {
    const earlier = encodeCursor('dom_01m8amsvwhe6kad5cfxy1cc9aa');
    expect(withCursor(`/v1/domains?cursor=${earlier}&limit=2`, next)).toBe(`/v1/domains?cursor=${next}&limit=2`);
    // Escaped, the name is still the cursor's: never a second one beside it.
    const url = withCursor(`/v1/domains?limit=2&%63ursor=${earlier}`, next);
    expect(new URLSearchParams(url.slice(url.indexOf('?') + 1)).getAll('cursor')).toEqual([next]);
    // An escaped value comes back as URLSearchParams writes it, meaning the same.
    const q = withCursor('/v1/domains?q=b%C3%BCcher', next);
    expect(new URLSearchParams(q.slice(q.indexOf('?') + 1)).get('q')).toBe('bücher');
    // What a Link header's <...> must not hold raw is escaped.
    expect(withCursor('/v1/domains?q=a>b"c', next)).toBe(`/v1/domains?q=a%3Eb%22c&cursor=${next}`);
  });
});
