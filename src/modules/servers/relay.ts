import { PassThrough, type Readable, Transform } from 'node:stream';

/** How long a relay waits for the receiving server to take more bytes before the copy goes on without it. */
const RELAY_STALL_MS = 15_000;

/**
 * The bytes one server's agent sends (a pack task's output) passed on, as they arrive, to another
 * server's agent (a receive task's input): one pass through the control plane instead of two
 * (the copy kept here, then packed again and sent). The receiving side sets the pace; a receiver
 * that fails, or takes no bytes for RELAY_STALL_MS, is dropped and the copy here goes on alone.
 */
export class Relay {
  private readonly stream = new PassThrough({ highWaterMark: 2 ** 20 });
  private taken = false;

  constructor(private readonly o: { stallMs: number } = { stallMs: RELAY_STALL_MS }) {
    this.stream.on('error', () => undefined); // told to the receiving side's request, if any
  }

  /** The bytes, for the receiving agent's request; none for a second one (a retry): they went to the first. */
  take(): Readable | undefined {
    if (this.taken || this.stream.destroyed) return undefined;
    this.taken = true;
    return this.stream;
  }

  /** Whether the receiving side still gets bytes: taken, or waiting to be. */
  get wanted(): boolean {
    return this.taken || !this.stream.destroyed;
  }

  /** The receiving side cut off (its request ends in an error), the copy here going on alone. */
  drop(reason: string): void {
    this.stream.destroy(new Error(reason));
  }

  /** What flows through, passed on to the receiving side as well, at its pace while it keeps up. */
  tee(): Transform {
    const out = this.stream;
    const { stallMs } = this.o;
    const drop = (reason: string) => this.drop(reason);
    return new Transform({
      transform(chunk: Buffer, _encoding, done) {
        if (out.destroyed || out.write(chunk)) return done(null, chunk);
        const stalled = setTimeout(() => drop('the receiving server took no bytes for too long'), stallMs);
        stalled.unref();
        const go = () => {
          clearTimeout(stalled);
          out.off('drain', go);
          out.off('close', go);
          done(null, chunk);
        };
        out.on('drain', go);
        out.on('close', go);
      },
      flush(done) {
        if (!out.destroyed) out.end();
        done();
      },
    });
  }
}

/** The relays of this process's running tasks, by task id: the sending task's and the receiving task's. */
export const relays = new Map<string, Relay>();
