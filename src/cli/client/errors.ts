import { BerthError, OperationFailedError } from '@berth/sdk';

/** A mistake on the command line: exit code 2, the usage hint printed. */
export class UsageError extends Error {}

export const EXIT = { ok: 0, api: 1, usage: 2 } as const;

/** A problem, readably: title, status and code, the detail, each field error, the request id. */
export function describeError(err: unknown): { text: string; code: number } {
  if (err instanceof UsageError) return { text: `berth: ${err.message}`, code: EXIT.usage };
  if (err instanceof BerthError) {
    const lines = [`Error: ${err.title} (${err.status} ${err.code})`, `  ${err.detail}`];
    for (const e of err.errors) lines.push(`  - ${e.pointer || '(body)'}: ${e.detail} [${e.code}]`);
    if (err.requestId) lines.push(`  request id: ${err.requestId}`);
    return { text: lines.join('\n'), code: EXIT.api };
  }
  if (err instanceof OperationFailedError) {
    const e = err.operation.error;
    return { text: `Error: ${err.message}${e ? ` [${e.code}]` : ''}`, code: EXIT.api };
  }
  return { text: `Error: ${err instanceof Error ? err.message : String(err)}`, code: EXIT.api };
}
