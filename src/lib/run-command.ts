import { execFile } from 'node:child_process';

/** A command that failed: `<label> failed: <what it said>`, as `sync_error` shows it. */
class CommandError extends Error {}

/**
 * What a daemon's tool said went wrong: its first line that says error, fatal or emerg (nginx
 * ends with a summary line, not the cause), else its last line.
 */
function explain(text: string): string | undefined {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return lines.find((l) => /\b(error|fatal|emerg)\b/i.test(l)) ?? lines.at(-1);
}

/**
 * Runs a program with an argument array (never a shell string), bounded in time; rejects with a
 * CommandError named by `label` (what the operator would type, without file paths) carrying
 * what the program said went wrong.
 */
export function runCommand(file: string, args: string[], label: string, timeoutMs = 30_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: timeoutMs, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (!err) return resolve(stdout);
      const code = (err as NodeJS.ErrnoException).code;
      const detail =
        code === 'ENOENT'
          ? 'command not found'
          : err.killed
            ? `no answer within ${timeoutMs} ms`
            : (explain(stderr) ?? explain(stdout) ?? `exit code ${code}`);
      reject(new CommandError(`${label} failed: ${detail}`));
    });
  });
}
