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

  it('removes key query values and URL credentials from URLs', () => {
    expect(redactUrl('/v1beta/models/x:generateContent?alt=sse&key=AIzaSECRET')).toBe(
      '/v1beta/models/x:generateContent?alt=sse&key=[Redacted]',
    );
    expect(redactUrl('/api/user/self?Access_Token=abc123&p=2&code=654321')).toBe('/api/user/self?Access_Token=[Redacted]&p=2&code=[Redacted]');
    expect(redactUrl('https://user:hunter2@api.example.com/v1?x=1')).toBe('https://[Redacted]@api.example.com/v1?x=1');
  });

  it('censors credential headers wherever a request or response is logged', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ service: 'test', destination });
    const headers = {
      authorization: 'Bearer sk-header-secret',
      cookie: 'session=cookie-secret',
      'x-goog-api-key': 'AIza-goog-secret',
      'stripe-signature': 't=1,v1=signature-secret',
      'set-cookie': 'session=set-cookie-secret',
    };
    logger.info({ req: { method: 'GET', url: '/v1beta/models?key=query-secret', headers } }, 'req');
    logger.info({ headers, res: { headers } }, 'headers');
    logger.info({ authorization: 'Bearer top-level-secret', upstream: { cookie: 'nested-cookie-secret' } }, 'loose');
    const text = lines.join('');
    for (const secret of ['header-secret', 'cookie-secret', 'goog-secret', 'signature-secret', 'query-secret', 'top-level-secret']) {
      expect({ secret, logged: text.includes(secret) }).toEqual({ secret, logged: false });
    }
  });
});
