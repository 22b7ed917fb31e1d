/** A field the API refused: a JSON Pointer into the request, a stable code, and what was wrong. */
export interface FieldError {
  pointer: string;
  code: string;
  detail: string;
}

/**
 * A problem the API answered (RFC 9457 `application/problem+json`): `code` is stable and meant
 * for programs, `detail` for people, `request_id` for support. Thrown for every 4xx and 5xx.
 */
export class BerthError extends Error {
  readonly status: number;
  readonly code: string;
  readonly title: string;
  readonly detail: string;
  readonly errors: FieldError[];
  readonly requestId: string | null;
  /** The whole problem body, with any extension members (`used_by`, `accepted_types`…). */
  readonly problem: Record<string, unknown>;

  constructor(status: number, problem: Record<string, unknown>, requestId: string | null) {
    const str = (v: unknown, fallback: string) => (typeof v === 'string' ? v : fallback);
    const detail = str(problem.detail, str(problem.title, `HTTP ${status}`));
    super(detail);
    this.name = 'BerthError';
    this.status = status;
    this.code = str(problem.code, `http_${status}`);
    this.title = str(problem.title, `HTTP ${status}`);
    this.detail = detail;
    this.errors = Array.isArray(problem.errors) ? (problem.errors as FieldError[]) : [];
    this.requestId = str(problem.request_id, '') || requestId;
    this.problem = problem;
  }

  /** The problem a response carries (a body that is not JSON still gives a BerthError). */
  static async from(response: Response): Promise<BerthError> {
    const text = await response.text();
    let problem: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === 'object') problem = parsed as Record<string, unknown>;
    } catch {
      problem = { detail: text.slice(0, 500) || undefined };
    }
    return new BerthError(response.status, problem, response.headers.get('x-request-id'));
  }
}

/** An operation that ended `failed` or `canceled` while `operations.wait()` watched it. */
export class OperationFailedError extends Error {
  constructor(readonly operation: { id: string; status: string; error?: { code: string; detail?: string } | null }) {
    super(`operation ${operation.id} ${operation.status}${operation.error?.detail ? `: ${operation.error.detail}` : ''}`);
    this.name = 'OperationFailedError';
  }
}
