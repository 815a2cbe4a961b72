import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { AppError, requestTooLarge } from '@modelgate/errors';
import busboy from 'busboy';
import type { StreamedBody } from '../../core/provider';
import { Spool } from './spool';

/** How much of the first file is waited for before the call starts: enough for an audio header. */
export const FILE_HEAD_BYTES = 64 * 1024;

/** One uploaded file, its content at [start, end) of the spool (end unknown while it arrives). */
export interface UploadedFile {
  field: string;
  filename: string;
  contentType: string;
  start: number;
  end: number | undefined;
}

export interface MultipartUploadOptions {
  maxBodyMb: number;
  /** Where uploads are spooled (the OS temp dir). */
  spoolDir: string;
}

/** A multipart header parameter value: quotes and line breaks percent-encoded, as browsers do. */
function headerValue(value: string): string {
  return value.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/**
 * A multipart/form-data request read as it arrives (docs/api.md 2.13): text fields are kept, every
 * part but `model` is re-encoded into a spool (a temporary file) under the relay's own boundary,
 * and each upstream attempt gets `model` first and then the spool as it grows, so an upload goes to
 * the upstream while the client still sends it, a retry re-sends it from disk, and memory stays
 * flat whatever its size. Over MAX_REQUEST_BODY_MB the upload fails with 413.
 */
export class MultipartUpload {
  /** The text fields seen so far (the last value of a repeated name). */
  readonly fields = new Map<string, string>();
  readonly files: UploadedFile[] = [];
  /**
   * Resolves once what the call needs up front is known: the text fields before the first file and
   * that file's first FILE_HEAD_BYTES (when `model` came before it), or the whole form. Rejects with
   * the 4xx the request deserves.
   */
  readonly ready: Promise<void>;
  /** Resolves when the whole body was received and spooled; rejects as `ready` does. */
  readonly complete: Promise<void>;
  private readonly spool: Spool;
  private readonly boundary = `----modelgate-${randomUUID()}`;
  private readonly maxBytes: number;
  private received = 0;
  private readonly parser: busboy.Busboy;

  constructor(
    private readonly req: IncomingMessage,
    options: MultipartUploadOptions,
  ) {
    this.maxBytes = options.maxBodyMb * 1024 * 1024;
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        defParamCharset: 'utf8',
        limits: { fileSize: this.maxBytes, fieldSize: 1024 * 1024, fields: 1000, files: 16 },
      });
    } catch {
      throw new AppError('invalid_json', 'request body must be multipart/form-data with a boundary');
    }
    this.parser = parser;
    this.spool = new Spool(options.spoolDir);
    let markReady!: () => void;
    let refuseReady!: (err: Error) => void;
    this.ready = new Promise((resolve, reject) => {
      markReady = resolve;
      refuseReady = reject;
    });
    let markComplete!: () => void;
    this.complete = new Promise((resolve, reject) => {
      markComplete = resolve;
      this.spool.once('failed', reject);
    });
    // Whoever waits on one of them handles the refusal; the other must not go unhandled.
    this.ready.catch(() => undefined);
    this.complete.catch(() => undefined);
    this.spool.once('failed', refuseReady);

    req.on('data', (chunk: Buffer) => {
      this.received += chunk.length;
      if (this.received > this.maxBytes) this.fail(requestTooLarge(options.maxBodyMb));
    });
    req.once('close', () => {
      if (!req.complete) this.fail(new AppError('invalid_request', 'the client closed the upload'));
    });
    // Busboy may announce the next part before the previous file's stream ended: parts are written
    // to the spool one after the other, in the client's order.
    let written = Promise.resolve();
    const inTurn = (write: () => void | Promise<void>) => {
      written = written.then(write).catch((err: unknown) => this.fail(err instanceof AppError ? err : new AppError('invalid_request', 'the upload failed')));
    };
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) return this.fail(new AppError('invalid_request', `field ${name} is too long`, { param: name }));
      this.fields.set(name, value);
      // `model` is sent first, as each upstream attempt names it (see `body`).
      if (name !== 'model') inTurn(() => this.write(`--${this.boundary}\r\nContent-Disposition: form-data; name="${headerValue(name)}"\r\n\r\n${value}\r\n`));
    });
    parser.on('file', (name, stream, info) => {
      stream.pause();
      // Without `model` before the first file, the call waits for the whole form.
      const first = this.files.length === 0;
      const modelFirst = this.fields.has('model');
      const file: UploadedFile = { field: name, filename: info.filename ?? 'file', contentType: info.mimeType, start: 0, end: undefined };
      this.files.push(file);
      stream.once('limit', () => this.fail(requestTooLarge(options.maxBodyMb)));
      // A file cut off (the body broke, or `dispose` stopped the parser mid-file) ends in an error
      // event: unheard, it would be thrown as an uncaught exception.
      stream.on('error', () => this.fail(new AppError('invalid_request', 'the multipart body is malformed')));
      inTurn(
        () =>
          new Promise<void>((resolve) => {
            this.write(
              `--${this.boundary}\r\nContent-Disposition: form-data; name="${headerValue(name)}"; filename="${headerValue(file.filename)}"\r\n` +
                `Content-Type: ${info.mimeType || 'application/octet-stream'}\r\n\r\n`,
            );
            file.start = this.spool.appended;
            stream.on('data', (chunk: Buffer) => {
              if (!this.spool.append(chunk)) {
                stream.pause();
                // Disposed mid-write, the spool's writer fails instead of draining: nothing is left to resume.
                void this.spool.drained().then(() => stream.resume(), () => undefined);
              }
              if (first && modelFirst && this.spool.appended - file.start >= FILE_HEAD_BYTES) markReady();
            });
            stream.once('end', () => {
              file.end = this.spool.appended;
              this.write('\r\n');
              if (first && modelFirst) markReady();
              resolve();
            });
            stream.resume();
          }),
      );
    });
    parser.once('filesLimit', () => this.fail(new AppError('invalid_request', 'too many files in the upload')));
    parser.once('fieldsLimit', () => this.fail(new AppError('invalid_request', 'too many fields in the upload')));
    parser.once('error', () => this.fail(new AppError('invalid_request', 'the multipart body is malformed')));
    parser.once('close', () =>
      inTurn(() => {
        this.write(`--${this.boundary}--\r\n`);
        this.spool.finish();
        markReady();
        markComplete();
      }),
    );
    req.pipe(parser);
  }

  /**
   * The body of one upstream attempt: `model` (the upstream model) and then every other part as the
   * client sent them, streamed as they arrive.
   */
  body(upstreamModel: string): StreamedBody {
    const head = `--${this.boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\n${upstreamModel}\r\n`;
    const spool = this.spool;
    return {
      contentType: `multipart/form-data; boundary=${this.boundary}`,
      // Known once the upload is whole: the upstream then gets a Content-Length instead of chunks.
      length: spool.ended ? Buffer.byteLength(head) + spool.appended : undefined,
      open: () => spool.reader(0, undefined, Buffer.from(head)),
      failure: () => spool.failure,
    };
  }

  /** A file's bytes as they arrive, from the spool (at most `maxBytes` of them). */
  fileReader(file: UploadedFile, maxBytes?: number): Readable {
    const end = maxBytes === undefined ? file.end : file.start + maxBytes;
    return this.spool.reader(file.start, file.end === undefined ? end : Math.min(end ?? file.end, file.end));
  }

  /** The request's declared body length, when it has one. */
  get declaredLength(): number | undefined {
    const declared = Number(this.req.headers['content-length']);
    return Number.isFinite(declared) && declared > 0 ? declared : undefined;
  }

  /** Stops reading the upload and removes its spool; the rest of the body is left to the HTTP server. */
  async dispose(): Promise<void> {
    this.req.unpipe(this.parser);
    this.parser.removeAllListeners('file');
    this.parser.destroy();
    await this.spool.dispose();
  }

  private write(text: string): void {
    this.spool.append(Buffer.from(text, 'utf8'));
  }

  private fail(err: AppError): void {
    if (this.spool.failure || this.spool.ended) return;
    this.spool.fail(err);
    this.req.unpipe(this.parser);
    this.req.resume();
  }
}
