import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { expect, it } from 'vitest';
import { inPieces } from '../../src/lib/pieces.js';

it('joins what arrives in 16 KiB into pieces of at least 1 MiB, the rest last, every byte in its order', async () => {
  const chunks = Array.from({ length: 200 }, () => randomBytes(16 * 1024));
  const pieces: Buffer[] = [];
  for await (const piece of Readable.from(chunks).pipe(inPieces(2 ** 20))) pieces.push(piece as Buffer);
  expect(pieces.map((p) => p.length)).toEqual([2 ** 20, 2 ** 20, 2 ** 20, 200 * 16 * 1024 - 3 * 2 ** 20]);
  expect(Buffer.concat(pieces).equals(Buffer.concat(chunks))).toBe(true);
});

it('passes nothing on for nothing', async () => {
  const pieces: Buffer[] = [];
  for await (const piece of Readable.from([]).pipe(inPieces(2 ** 20))) pieces.push(piece as Buffer);
  expect(pieces).toEqual([]);
});
