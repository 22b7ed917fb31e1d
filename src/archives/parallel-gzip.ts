import type { ZlibOptions } from 'node:zlib';
import { keep, take } from './buffer-pool.js';
import { gzipBlock, storedMemberBytes, writeStoredMember, type MemberPart } from './stored-gzip.js';

/**
 * gzip as pigz does it: the input cut into blocks compressed in parallel on libuv's thread pool
 * (8 in flight keep two cores busy; fewer left them waiting in the benchmark), handed on in order
 * as consecutive gzip members. A stream of members is a standard gzip file (RFC 1952 §2.2):
 * `tar -xzf`, `gunzip` and Node's own gunzip read it whole.
 *
 * Within a block, runs that look random (already compressed: images, video, archives) become
 * members of stored blocks at once, and only the rest goes to zlib: level 6 would spend 20 ms
 * per MiB on them to write stored blocks of the same size (stored-gzip.ts).
 *
 * Nothing is allocated per byte that passes but zlib's own output for the runs it compresses, so
 * a backup's memory stays flat whatever its size: the producer writes into the blocks directly (`room`, then `filled`: a backup reads its files
 * into them), a block goes back to a free list once its member is out, and the members are
 * handed on in one output buffer, reused: **a member handed on is valid until the next is asked
 * for**, so its consumer must be done with it by then (write it, hash it; not keep it). Buffers
 * allocated per member and dropped (node-tar's reads, zlib's output) outlived the young
 * generation and waited for a full collection: 80 MB above idle in the benchmark's backup.
 */
export class GzipBlocks {
  private readonly blockBytes: number;
  private readonly parallel: number;
  private readonly free: Buffer[] = [];
  private block: Buffer | null = null;
  private used = 0;
  private readonly inFlight: { block: Buffer; member: Promise<MemberPart[]> }[] = [];
  private out: Buffer;

  constructor(private readonly o: { blockBytes?: number; parallel?: number; zlib?: ZlibOptions } = {}) {
    this.blockBytes = o.blockBytes ?? 1024 * 1024;
    this.parallel = o.parallel ?? 8;
    this.out = take(storedMemberBytes(this.blockBytes));
  }

  /** The free part of the current block, to be filled from its start and reported with `filled`. */
  room(): Buffer {
    this.block ??= this.free.pop() ?? take(this.blockBytes);
    return this.block.subarray(this.used);
  }

  /** `n` bytes of `room()` were written; a full block starts compressing. */
  filled(n: number): void {
    this.used += n;
    if (this.used === this.blockBytes) this.start();
  }

  /** Copies `bytes` in (headers, padding: what is not read from a file). */
  write(bytes: Buffer): void {
    for (let at = 0; at < bytes.length;) {
      const n = bytes.copy(this.room(), 0, at);
      at += n;
      this.filled(n);
    }
  }

  /**
   * The finished members, oldest first (each valid until the next is asked for), while more
   * blocks are compressing than keep the cores busy: the producer hands these on before it
   * fills more, which bounds the memory in flight.
   */
  async *members(): AsyncGenerator<Buffer> {
    yield* this.drain(this.parallel - 1);
  }

  /** The rest of the members, the current block's last. */
  async *end(): AsyncGenerator<Buffer> {
    if (this.used > 0 || this.inFlight.length === 0) this.start(); // an empty input is one empty member
    yield* this.drain(0);
    keep([...this.free.splice(0), this.out]);
  }

  private start(): void {
    const block = this.block ?? Buffer.alloc(0);
    const member = gzipBlock(block.subarray(0, this.used), this.o.zlib);
    member.catch(() => undefined); // awaited in order in drain; a failure surfaces there
    this.inFlight.push({ block, member });
    this.block = null;
    this.used = 0;
  }

  private async *drain(leaving: number): AsyncGenerator<Buffer> {
    while (this.inFlight.length > leaving) {
      const done = this.inFlight.shift() as (typeof this.inFlight)[number];
      const parts = await done.member;
      const bytes = parts.reduce((n, p) => n + ('stored' in p ? storedMemberBytes(p.stored.length) : p.deflated.length), 0);
      if (bytes > this.out.length) this.out = Buffer.allocUnsafeSlow(bytes); // many runs, or one zlib grew
      let at = 0;
      for (const p of parts) at = 'stored' in p ? writeStoredMember(p.stored, this.out, at) : at + p.deflated.copy(this.out, at);
      if (done.block.length === this.blockBytes) this.free.push(done.block);
      yield this.out.subarray(0, at);
    }
  }
}
