import { describe, expect, it } from 'vitest';
import { parseDomainName } from '../../src/lib/domain-name.js';
import { nextSerial, serialGreater } from '../../src/lib/soa-serial.js';

describe('domain names', () => {
  it.each([
    ['Example.COM', 'example.com', 'example.com'],
    ['bücher.de', 'xn--bcher-kva.de', 'bücher.de'],
    ['xn--bcher-kva.de', 'xn--bcher-kva.de', 'bücher.de'],
    ['straße.de', 'xn--strae-oqa.de', 'straße.de'],
    ['例え.jp', 'xn--r8jz45g.jp', '例え.jp'],
    ['shop.example.co.uk.', 'shop.example.co.uk', 'shop.example.co.uk'],
  ])('%s → %s (%s)', (input, ascii, unicode) => {
    expect(parseDomainName(input)).toEqual({ ok: true, ascii, unicode });
  });

  it.each([
    ['', 'not_a_domain'],
    ['a..b', 'invalid_label'],
    ['-a.com', 'invalid_label'],
    ['a-.com', 'invalid_label'],
    ['a_b.com', 'invalid_label'],
    ['xn--.com', 'not_a_domain'],
    ['com', 'single_label'],
    [`${'a'.repeat(64)}.com`, 'label_too_long'],
    [`${'a.'.repeat(127)}com`, 'too_long'],
    ['my.test', 'special_use_tld'],
    ['printer.local', 'special_use_tld'],
    ['foo.example', 'special_use_tld'],
    ['x.localhost', 'special_use_tld'],
    ['x.invalid', 'special_use_tld'],
    ['x.alt', 'special_use_tld'],
    ['exa mple.com', 'not_a_domain'],
    ["x.com'; DROP TABLE domains;--", 'not_a_domain'],
  ])('%s is refused: %s', (input, problem) => {
    const r = parseDomainName(input);
    expect(r.ok).toBe(false);
    if (!r.ok) expect([problem, 'invalid_label', 'not_a_domain']).toContain(r.problem);
    if (!r.ok && problem !== 'not_a_domain') expect(r.problem).toBe(problem);
  });
});

describe('SOA serials', () => {
  const day = new Date('2026-11-21T10:00:00Z');
  it('start each day at nn = 00 and count up', () => {
    expect(nextSerial(null, day)).toBe(2026112100);
    expect(nextSerial(2026112100, day)).toBe(2026112101);
    expect(nextSerial(2026112099, new Date('2026-11-22T00:00:01Z'))).toBe(2026112200);
  });

  it('grow by one past 99 changes a day and when the clock goes back', () => {
    expect(nextSerial(2026112199, day)).toBe(2026112200);
    expect(nextSerial(2026112305, day)).toBe(2026112306);
  });

  it('always increase under RFC 1982 over many changes', () => {
    let s = nextSerial(null, day);
    for (let i = 0; i < 1000; i++) {
      const next = nextSerial(s, day);
      expect(serialGreater(next, s)).toBe(true);
      s = next;
    }
  });

  it('RFC 1982 comparison wraps', () => {
    expect(serialGreater(1, 2 ** 32 - 1)).toBe(true);
    expect(serialGreater(2 ** 32 - 1, 1)).toBe(false);
  });
});
