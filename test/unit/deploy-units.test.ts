import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
/** The V8 flags of a command line: `--max-…` and `--initial-…`. */
const heapFlags = (line: string) => line.match(/--(?:max|initial)-[a-z-]+=\d+/g) ?? [];

describe('the systemd unit of the control plane', () => {
  it("starts node with `npm start`'s heap flags (decision 0027), on the installed berth's serve", () => {
    const start = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.start as string;
    const exec = /^ExecStart=(.*)$/m.exec(read('deploy/systemd/berth.service'))?.[1] ?? '';
    expect(heapFlags(start)).toHaveLength(2);
    expect(heapFlags(exec)).toEqual(heapFlags(start));
    expect(exec).toMatch(/exec node .*"\$\(command -v berth\)" serve'$/);
  });
});
