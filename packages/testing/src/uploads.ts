// Uploads from a real node:http client (what the OpenAI and Anthropic Node SDKs sit on), for the
// answers services give before reading a body: what the client saw, including errors on its side.
import http, { type IncomingHttpHeaders } from 'node:http';
import net from 'node:net';

export interface UploadOutcome {
  status?: number;
  headers?: IncomingHttpHeaders;
  /** The answer, parsed as JSON. */
  body?: unknown;
  /** The client's error code (EPIPE, ECONNRESET, ...) if writing or reading failed, even after an answer. */
  error?: string;
  /** Bytes of body handed to the socket. */
  bytesSent: number;
}

function codeOf(err: unknown): string {
  return (err as { code?: string }).code ?? (err as Error).message;
}

/** One POST on a fresh connection; `write` sends the body and reports bytes through `outcome`. */
function upload(
  url: string,
  headers: Record<string, string>,
  write: (req: http.ClientRequest, outcome: UploadOutcome) => void,
): Promise<UploadOutcome> {
  return new Promise((resolve) => {
    const outcome: UploadOutcome = { bytesSent: 0 };
    let answerRead: Promise<void> = Promise.resolve();
    const req = http.request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      answerRead = new Promise((done) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          outcome.status = res.statusCode;
          outcome.headers = res.headers;
          outcome.body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          done();
        });
        res.on('error', (err) => {
          outcome.error ??= codeOf(err);
          done();
        });
      });
    });
    req.on('error', (err) => {
      outcome.error ??= codeOf(err);
    });
    req.on('close', () => void answerRead.then(() => resolve(outcome)));
    write(req, outcome);
  });
}

/**
 * POSTs `bytes` with a declared Content-Length: in one write (`fast`) or 64 KB every 2 ms (`slow`).
 */
export function uploadDeclaredBody(
  url: string,
  bytes: number,
  pace: 'fast' | 'slow',
  headers: Record<string, string> = {},
): Promise<UploadOutcome> {
  return upload(url, { ...headers, 'content-length': String(bytes) }, (req, outcome) => {
    if (pace === 'fast') {
      outcome.bytesSent = bytes;
      req.end(Buffer.alloc(bytes, 'a'));
      return;
    }
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const next = () => {
      if (req.destroyed) return;
      const size = Math.min(chunk.length, bytes - outcome.bytesSent);
      outcome.bytesSent += size;
      if (outcome.bytesSent >= bytes) {
        req.end(chunk.subarray(0, size));
        return;
      }
      req.write(chunk.subarray(0, size));
      setTimeout(next, 2);
    };
    next();
  });
}

export interface EndlessUploadOutcome {
  /** What the server sent back, as text (status line, headers, body). */
  answer: string;
  /** Body bytes the socket accepted before the server cut the connection. */
  bytesSent: number;
  /** The socket error that ended the upload (EPIPE, ECONNRESET), if any. */
  error?: string;
}

/**
 * POSTs a body that never ends, as fast as the connection takes it, until the server closes the
 * connection: chunked, or with `declaredBytes` as its Content-Length. A raw socket, because
 * node:http's client itself stops sending once it has read an answer with `Connection: close`.
 */
export function uploadEndlessBody(url: string, declaredBytes?: number, headers: Record<string, string> = {}): Promise<EndlessUploadOutcome> {
  const { hostname, port, pathname, search } = new URL(url);
  const framing = declaredBytes === undefined ? 'Transfer-Encoding: chunked' : `Content-Length: ${declaredBytes}`;
  const head = [`POST ${pathname}${search} HTTP/1.1`, `Host: ${hostname}:${port}`, 'Content-Type: application/json', framing]
    .concat(Object.entries(headers).map(([name, value]) => `${name}: ${value}`))
    .join('\r\n');
  const data = Buffer.alloc(256 * 1024, 'a');
  const chunk = declaredBytes === undefined ? Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]) : data;
  return new Promise((resolve) => {
    const outcome: EndlessUploadOutcome = { answer: '', bytesSent: 0 };
    let headBytes = 0;
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(`${head}\r\n\r\n`);
      headBytes = socket.bytesWritten;
      const pump = () => {
        while (socket.writable) {
          if (!socket.write(chunk)) {
            socket.once('drain', pump);
            return;
          }
        }
      };
      pump();
    });
    socket.on('close', () => {
      outcome.bytesSent = Math.max(0, socket.bytesWritten - headBytes);
      resolve(outcome);
    });
    socket.setEncoding('latin1');
    socket.on('data', (text: string) => {
      outcome.answer += text;
    });
    socket.on('error', (err) => {
      outcome.error ??= codeOf(err);
    });
  });
}
