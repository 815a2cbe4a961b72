import { Writable } from 'node:stream';
import { createLogger, redactUrl } from '../src';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { lines, destination };
}

describe('logger', () => {
  it('writes JSON lines with the service name and censors secrets', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ service: 'test', destination });
    logger.info(
      { password: 'hunter22hunter', body: { code: '123456', key: 'sk-secret', password: 'p4ssw0rd!' }, headers: { authorization: 'Bearer sk-abc' } },
      'hello',
    );
    const line = lines.join('');
    const parsed = JSON.parse(line);
    expect(parsed.service).toBe('test');
    expect(parsed.msg).toBe('hello');
    for (const secret of ['hunter22hunter', '123456', 'sk-secret', 'sk-abc']) expect(line).not.toContain(secret);
  });

  it('removes key query values from URLs', () => {
    expect(redactUrl('/v1beta/models/x:generateContent?alt=sse&key=AIzaSECRET')).toBe(
      '/v1beta/models/x:generateContent?alt=sse&key=[Redacted]',
    );
  });
});
