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
 * them again from the start, and no upload is ever held whole in memory. A reader takes the bytes
 * not yet on disk from the chunks the writer still holds (the first attempt, keeping pace with the
 * client, reads no disk at all), the older ones from the file. Removed by `dispose`.
 */
export class Spool extends EventEmitter {
  /** Bytes on disk. */
  flushed = 0;
  /** Bytes appended (on disk, or in `unflushed`). */
  appended = 0;
  /** No more bytes come: readers end at `appended`. */
  ended = false;
  failure: Error | undefined;
  readonly path: string;
  /** The chunks the writer has not yet put on disk, oldest first, each at its offset. */
  private readonly unflushed: { offset: number; chunk: Buffer }[] = [];
  private readonly writer: WriteStream;
  private disposed = false;

  constructor(dir: string) {
    super();
    this.setMaxListeners(0);
    this.path = join(dir, `modelgate-upload-${randomUUID()}`);
    this.writer = createWriteStream(this.path, { flags: 'wx', mode: 0o600 });
    this.writer.on('error', (err) => this.fail(err));
  }

  /** Appends bytes; false when the writer is full (wait for `drained` before the next). */
  append(chunk: Buffer): boolean {
    this.unflushed.push({ offset: this.appended, chunk });
    this.appended += chunk.length;
    // The writer's callbacks come in order: each one is for the oldest chunk not yet on disk.
    const more = this.writer.write(chunk, (err) => {
      if (err) return;
      this.flushed += chunk.length;
      this.unflushed.shift();
    });
    this.emit('grow');
    return more;
  }

  /** The bytes at `position` not yet on disk (up to `end`), or undefined when they are on disk. */
  unflushedAt(position: number, end: number): Buffer | undefined {
    for (const { offset, chunk } of this.unflushed) {
      if (position < offset + chunk.length) {
        return position < offset ? undefined : chunk.subarray(position - offset, Math.min(chunk.length, end - offset));
      }
    }
    return undefined;
  }

  /** Resolves when the writer can take more. */
  drained(): Promise<unknown> {
    return once(this.writer, 'drain');
  }

  /** No more bytes come: readers end at the last one. */
  finish(): void {
    if (this.ended || this.failure) return;
    this.ended = true;
    this.writer.end();
    this.emit('grow');
  }

  /** The upload broke (client gone, too large): readers fail with `failure`. */
  fail(failure: Error): void {
    if (this.failure || this.ended) return;
    this.failure = failure;
    this.emit('failed', failure);
    this.emit('grow');
  }

  /**
   * A stream of `prefix` (when given) and then the bytes [start, end) (end: the spool's end), waiting
   * for bytes not yet appended.
   */
  reader(start = 0, end?: number, prefix?: Buffer): Readable {
    return new SpoolReader(this, start, end, prefix);
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
    private prefix: Buffer | undefined,
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
    const { spool, prefix } = this;
    if (prefix) {
      this.prefix = undefined;
      this.push(prefix);
      return;
    }
    for (;;) {
      const available = Math.min(this.end ?? Infinity, spool.appended);
      if (this.position < available) {
        const held = spool.unflushedAt(this.position, available);
        if (held) {
          this.position += held.length;
          this.push(held);
          return;
        }
        this.handle ??= await open(spool.path, 'r');
        const length = Math.min(READ_BYTES, Math.min(available, spool.flushed) - this.position);
        const { bytesRead, buffer } = await this.handle.read(Buffer.allocUnsafe(length), 0, length, this.position);
        if (bytesRead === 0) throw new Error('the upload spool was removed');
        this.position += bytesRead;
        this.push(buffer.subarray(0, bytesRead));
        return;
      }
      if (spool.failure) throw spool.failure;
      if ((this.end !== undefined && this.position >= this.end) || spool.ended) {
        this.push(null);
        return;
      }
      await once(spool, 'grow');
    }
  }
}
