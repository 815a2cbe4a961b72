import { randomUUID } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { type FileHandle, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';

/** What one read of the spool hands on: small enough to keep an upload's footprint flat. */
const READ_BYTES = 64 * 1024;

/**
 * The newest bytes kept in memory after they are on disk, for a reader a little behind the client
 * (the upstream taking them at its own pace) to take without reading the file back.
 */
const RECENT_BYTES = 1024 * 1024;

/**
 * A temporary file an upload is written to as it arrives, readable from any offset while it grows
 * (docs/api.md 2.13): the upstream gets the bytes as they come, a retry on another channel reads
 * them again from the start, and no upload is ever held whole in memory. A reader takes the newest
 * bytes (those not yet on disk, and RECENT_BYTES more) from the chunks received, so the first
 * attempt, keeping pace with the client, reads no disk at all; older ones come from the file.
 * Removed by `dispose`.
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
  /** The newest chunks, oldest first, each at its offset: all not yet on disk, and RECENT_BYTES more. */
  private readonly recent: { offset: number; chunk: Buffer }[] = [];
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
    this.recent.push({ offset: this.appended, chunk });
    this.appended += chunk.length;
    // The writer's callbacks come in order, each for the oldest chunk not yet on disk.
    const more = this.writer.write(chunk, (err) => {
      if (err) return;
      this.flushed += chunk.length;
      const { recent } = this;
      while (recent.length > 0 && recent[0]!.offset + recent[0]!.chunk.length <= Math.min(this.flushed, this.appended - RECENT_BYTES)) recent.shift();
    });
    this.emit('grow');
    return more;
  }

  /** The bytes at `position` held in memory (up to `end`), or undefined when they are only on disk. */
  recentAt(position: number, end: number): Buffer | undefined {
    const { recent } = this;
    const first = recent[0];
    if (!first || position < first.offset) return undefined;
    // Chunks are contiguous: search from the newest, where a reader keeping pace is.
    for (let index = recent.length - 1; index >= 0; index--) {
      const { offset, chunk } = recent[index]!;
      if (position >= offset) return chunk.subarray(position - offset, Math.min(chunk.length, end - offset));
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
        const held = spool.recentAt(this.position, available);
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
