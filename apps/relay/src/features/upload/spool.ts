import { randomUUID } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { type FileHandle, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';

/** What one read of the spool hands on: small enough to keep an upload's footprint flat. */
const READ_BYTES = 64 * 1024;

/**
 * A temporary file an upload is written to as it arrives, readable from any offset while it grows
 * (docs/api.md 2.13): the upstream gets the bytes as they come, a retry on another channel reads
 * them again from the start, and no upload is ever held whole in memory. Removed by `dispose`.
 */
export class Spool extends EventEmitter {
  /** Bytes on disk, readable. */
  flushed = 0;
  /** Bytes handed to `append` (a chunk counts before it is on disk). */
  appended = 0;
  finished = false;
  failure: Error | undefined;
  private readonly writer: WriteStream;
  private disposed = false;

  constructor(dir: string) {
    super();
    this.setMaxListeners(0);
    this.path = join(dir, `modelgate-upload-${randomUUID()}`);
    this.writer = createWriteStream(this.path, { flags: 'wx', mode: 0o600 });
    this.writer.on('error', (err) => this.fail(err));
  }

  readonly path: string;

  /** Appends bytes; false when the writer is full (wait for `drain` before the next). */
  append(chunk: Buffer): boolean {
    this.appended += chunk.length;
    return this.writer.write(chunk, (err) => {
      if (err) return;
      this.flushed += chunk.length;
      this.emit('grow');
    });
  }

  /** Resolves when the writer can take more. */
  drained(): Promise<unknown> {
    return once(this.writer, 'drain');
  }

  /** No more bytes come: readers end at the last one. */
  finish(): void {
    if (this.finished || this.failure) return;
    this.writer.end(() => {
      this.finished = true;
      this.emit('grow');
    });
  }

  /** The upload broke (client gone, too large): readers fail with `failure`. */
  fail(failure: Error): void {
    if (this.failure || this.finished) return;
    this.failure = failure;
    this.emit('failed', failure);
    this.emit('grow');
  }

  /** A stream of bytes [start, end) (end: the spool's end), waiting for bytes not yet written. */
  reader(start = 0, end?: number): Readable {
    return new SpoolReader(this, start, end);
  }

  /** Ends the writer and removes the file (readers still open fail). */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.fail(new Error('upload discarded'));
    this.writer.destroy();
    await rm(this.path, { force: true });
  }
}

/** Reads a spool from an offset, following it while it grows. */
class SpoolReader extends Readable {
  private handle: FileHandle | undefined;

  constructor(
    private readonly spool: Spool,
    private position: number,
    private readonly end: number | undefined,
  ) {
    super({ highWaterMark: READ_BYTES });
  }

  override _read(): void {
    this.readNext().catch((err: unknown) => this.destroy(err as Error));
  }

  override _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    const closing = this.handle?.close();
    this.handle = undefined;
    if (closing) closing.then(() => callback(err), () => callback(err));
    else callback(err);
  }

  private async readNext(): Promise<void> {
    const { spool, end } = this;
    for (;;) {
      const available = Math.min(end ?? Infinity, spool.flushed);
      if (this.position < available) {
        this.handle ??= await open(spool.path, 'r');
        const length = Math.min(READ_BYTES, available - this.position);
        const { bytesRead, buffer } = await this.handle.read(Buffer.allocUnsafe(length), 0, length, this.position);
        if (bytesRead === 0) throw new Error('the upload spool was removed');
        this.position += bytesRead;
        this.push(buffer.subarray(0, bytesRead));
        return;
      }
      if (spool.failure) throw spool.failure;
      // Finished: `flushed` is final, so nothing more will come.
      if ((end !== undefined && this.position >= end) || spool.finished) {
        this.push(null);
        return;
      }
      await once(spool, 'grow');
    }
  }
}
