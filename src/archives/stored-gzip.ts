import { promisify } from 'node:util';
import { crc32, gzip, type ZlibOptions } from 'node:zlib';

/**
 * Bytes that deflate cannot shrink (photos, video, archives: anything already compressed) and
 * a cheap way to tell them apart, so that a backup does not spend gzip -6's ~20 ms per MiB on
 * them for nothing: on such bytes level 6 writes stored blocks anyway, which cost no more than a
 * CRC to write here.
 */

const SEGMENT_BYTES = 16 * 1024;
/** Every 8th byte: 2,048 samples per segment, a quarter of a millisecond per MiB of JavaScript. */
const SAMPLE_STEP = 8;
/**
 * Order-0 entropy, in bits per byte, from which a segment is stored. Random bytes measure
 * 7.88–7.94 at this sample size (2,000 segments); a segment with a tenth of text measures about
 * 7.81 and one with a fifth 7.61 (level 6 takes 10 and 20 % off them). Entropy misses repeats
 * (the LZ half of deflate), so the line sits just under random: what falls above it would gain
 * a few percent at most.
 */
const STORED_FROM_BITS = 7.8;

const counts = new Uint32Array(256);

function looksRandom(bytes: Buffer, from: number, to: number): boolean {
  counts.fill(0);
  let n = 0;
  for (let i = from; i < to; i += SAMPLE_STEP, n++) counts[bytes[i] as number]!++;
  if (n < 256) return false; // too few samples to tell; deflate decides
  let bits = 0;
  for (const c of counts) if (c > 0) bits -= (c / n) * Math.log2(c / n);
  return bits >= STORED_FROM_BITS;
}

interface Run {
  bytes: Buffer;
  stored: boolean;
}

/** `block` cut into runs of consecutive segments that look alike: random-looking ones and the rest. */
export function storedRuns(block: Buffer): Run[] {
  const runs: Run[] = [];
  let start = 0;
  let stored = false;
  for (let at = 0; at < block.length; at += SEGMENT_BYTES) {
    const s = looksRandom(block, at, Math.min(at + SEGMENT_BYTES, block.length));
    if (at > 0 && s !== stored) {
      runs.push({ bytes: block.subarray(start, at), stored });
      start = at;
    }
    stored = s;
  }
  if (block.length > start || runs.length === 0) runs.push({ bytes: block.subarray(start), stored });
  return runs;
}

const gzipAsync = promisify(gzip);

/** What zlib writes before a gzip member: no name, no time, OS 3 (Unix) (RFC 1952 §2.3). */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 3]);
const STORED_BLOCK_MAX = 0xffff;

/** The length of `n` bytes as one stored member: header, five bytes per 64 KiB block, trailer. */
export const storedMemberBytes = (n: number): number =>
  GZIP_HEADER.length + 5 * Math.max(1, Math.ceil(n / STORED_BLOCK_MAX)) + n + 8;

/**
 * `bytes` as one gzip member (RFC 1952) of stored deflate blocks (RFC 1951 §3.2.4), written
 * into `out` at `at` (room for `storedMemberBytes`); returns where it ends.
 */
export function writeStoredMember(bytes: Buffer, out: Buffer, at: number): number {
  at += GZIP_HEADER.copy(out, at);
  let from = 0;
  do {
    const len = Math.min(STORED_BLOCK_MAX, bytes.length - from);
    out[at] = from + len === bytes.length ? 1 : 0; // BFINAL on the last block; BTYPE 00
    out.writeUInt16LE(len, at + 1);
    out.writeUInt16LE(~len & 0xffff, at + 3);
    at += 5 + bytes.copy(out, at + 5, from, from + len);
    from += len;
  } while (from < bytes.length);
  at = out.writeUInt32LE(crc32(bytes), at);
  return out.writeUInt32LE(bytes.length % 2 ** 32, at);
}

/** A block's member: a run to store (still in the block) or a run zlib compressed. */
export type MemberPart = { stored: Buffer } | { deflated: Buffer };

/**
 * `block` as gzip members, one per run: random-looking runs (at level 0, every one) stored here,
 * the rest deflated on libuv's thread pool. (One member switching level between runs, with zlib's `deflateParams`,
 * measured twice the CPU per MiB of these separate members.) A stored run is a subarray of
 * `block` itself, written out (`writeStoredMember`) before the block is reused.
 */
export function gzipBlock(block: Buffer, options: ZlibOptions = {}): Promise<MemberPart[]> {
  // Level 0 stores everything: the whole block is one stored run, with no entropy look first.
  if (options.level === 0) return Promise.resolve([{ stored: block }]);
  return Promise.all(
    storedRuns(block).map((run) =>
      run.stored ? Promise.resolve({ stored: run.bytes }) : gzipAsync(run.bytes, options).then((deflated) => ({ deflated })),
    ),
  );
}
