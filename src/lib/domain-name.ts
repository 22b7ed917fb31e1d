import { domainToASCII, domainToUnicode } from 'node:url';

/** Special-use and reserved TLDs (RFC 2606, RFC 6761, RFC 6762, RFC 9476) that cannot be hosted. */
const SPECIAL_USE_TLDS = new Set(['test', 'example', 'invalid', 'localhost', 'local', 'alt']);
const LDH_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

type DomainNameProblem = 'not_a_domain' | 'too_long' | 'label_too_long' | 'single_label' | 'invalid_label' | 'special_use_tld';

export type ParsedDomainName =
  { ok: true; ascii: string; unicode: string } | { ok: false; problem: DomainNameProblem; detail: string };

/**
 * Normalises a domain name the way registries do: UTS #46 (non-transitional, IDNA2008
 * compatible) to the lowercase A-label, then the DNS rules: ≤ 253 octets, labels ≤ 63,
 * letters, digits and inner hyphens only, at least two labels, not a special-use TLD.
 */
export function parseDomainName(input: string): ParsedDomainName {
  const trimmed = input.endsWith('.') ? input.slice(0, -1) : input;
  const ascii = trimmed === '' ? '' : domainToASCII(trimmed);
  if (!ascii) return { ok: false, problem: 'not_a_domain', detail: 'is not a valid domain name' };
  if (ascii.length > 253) return { ok: false, problem: 'too_long', detail: 'must be at most 253 characters' };
  const labels = ascii.split('.');
  if (labels.length < 2) return { ok: false, problem: 'single_label', detail: 'needs at least two labels' };
  for (const label of labels) {
    if (label.length > 63)
      return { ok: false, problem: 'label_too_long', detail: `label "${label}" is longer than 63 characters` };
    if (!LDH_LABEL.test(label)) {
      return { ok: false, problem: 'invalid_label', detail: `label "${label}" may hold only letters, digits and inner hyphens` };
    }
  }
  if (SPECIAL_USE_TLDS.has(labels[labels.length - 1] as string)) {
    return { ok: false, problem: 'special_use_tld', detail: 'is under a special-use top-level domain' };
  }
  return { ok: true, ascii, unicode: domainToUnicode(ascii) };
}

const NON_ASCII = /[^\x00-\x7f]/;

/**
 * A DNS name as people may type it (`www.bücher`, `Shop.Example.com.`): each label with a
 * character outside ASCII becomes its A-label (UTS #46), the rest are lower-cased. `*`, `@`,
 * `_service` labels and a trailing dot pass as they are; null when a label has no A-label.
 */
export function asciiName(name: string): string | null {
  if (!NON_ASCII.test(name)) return name.toLowerCase();
  const labels = name.split('.').map((label) => (NON_ASCII.test(label) ? domainToASCII(label) : label.toLowerCase()));
  return labels.some((label, i) => label === '' && i !== labels.length - 1) ? null : labels.join('.');
}

/** The Unicode form of a name: each `xn--` label decoded (one that does not decode stays). */
export const unicodeName = (name: string): string =>
  name.includes('xn--')
    ? name
        .split('.')
        .map((label) => (label.startsWith('xn--') ? domainToUnicode(label) || label : label))
        .join('.')
    : name;
