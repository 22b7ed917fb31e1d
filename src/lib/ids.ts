import { typeid } from 'typeid-js';

/** TypeID prefixes of SPEC §1. */
export type IdPrefix =
  | 'acc'
  | 'pln'
  | 'rsl'
  | 'dom'
  | 'rec'
  | 'chg'
  | 'eml'
  | 'fwd'
  | 'db'
  | 'dbu'
  | 'site'
  | 'dpl'
  | 'bak'
  | 'bks'
  | 'op'
  | 'evt'
  | 'whk'
  | 'whd'
  | 'tok'
  | 'req';

export const newId = (prefix: IdPrefix): string => typeid(prefix).toString();

/** The 26-character suffix: a UUIDv7 in Crockford base32, first character 0-7. */
const ID_SUFFIX_PATTERN = '[0-7][0-9a-hjkmnp-tv-z]{25}';

export const idPattern = (prefix: IdPrefix): string => `^${prefix}_${ID_SUFFIX_PATTERN}$`;

export const isId = (prefix: IdPrefix, value: string): boolean => new RegExp(idPattern(prefix)).test(value);
