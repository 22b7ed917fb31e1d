/**
 * An account's username: its Unix user, its PHP pools and its databases' prefix are named after
 * it, so the one pattern is checked wherever it becomes a name (the API, the agent's units, the
 * database apply).
 */
export const ACCOUNT_USERNAME_PATTERN = '^[a-z][a-z0-9]{2,31}$';

const USERNAME = new RegExp(ACCOUNT_USERNAME_PATTERN);
export const isAccountUsername = (value: string): boolean => USERNAME.test(value);
