/** PostgreSQL error classes, recognised by SQLSTATE and constraint name (never by message text). */
interface PgError {
  code?: string;
  constraint?: string;
}

const pgError = (err: unknown): PgError => (typeof err === 'object' && err !== null ? err : {});

export const isUniqueViolation = (err: unknown, constraint?: string): boolean =>
  pgError(err).code === '23505' && (constraint === undefined || pgError(err).constraint === constraint);

/** 23503 foreign_key_violation, or 23001 restrict_violation from an ON DELETE RESTRICT key. */
export const isForeignKeyViolation = (err: unknown, constraint?: string): boolean =>
  ['23503', '23001'].includes(pgError(err).code ?? '') && (constraint === undefined || pgError(err).constraint === constraint);

/**
 * 40P01 deadlock_detected or 40001 serialization_failure: the transaction lost a race with a
 * concurrent one and was rolled back; the same request, sent again, can succeed.
 */
export const isLostRace = (err: unknown): boolean => ['40P01', '40001'].includes(pgError(err).code ?? '');
