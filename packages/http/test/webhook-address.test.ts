import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkWebhookUrl, isPublicAddress, WebhookAddressError, webhookLookup } from '../src';

describe('isPublicAddress', () => {
  it.each([
    '0.0.0.0', '10.1.2.3', '100.64.0.1', '127.0.0.1', '127.9.9.9', '169.254.169.254', '172.16.0.1', '172.31.255.255',
    '192.168.1.1', '198.18.0.1', '224.0.0.251', '239.255.255.250', '255.255.255.255',
    '::', '::1', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', 'fec0::1',
    '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '0:0:0:0:0:ffff:a9fe:a9fe', '64:ff9b::a00:1', '2002:c0a8:101::1',
    'fe80::1%eth0', 'localhost', '',
  ])('%s is not public', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '2001:4860:4860::8888', '::ffff:8.8.8.8', '64:ff9b::808:808'])(
    '%s is public',
    (address) => {
      expect(isPublicAddress(address)).toBe(true);
    },
  );
});

describe('checkWebhookUrl', () => {
  const strict = { allowPrivate: false };

  it('refuses what is not an http(s) URL with a host, or carries credentials', async () => {
    for (const url of ['not a url', 'ftp://example.com/', 'file:///etc/passwd', 'https://user:pw@example.com/']) {
      await expect(checkWebhookUrl(url, strict)).rejects.toBeInstanceOf(WebhookAddressError);
    }
  });

  it('refuses loopback and private addresses however they are written, and names resolving to them', async () => {
    for (const url of ['http://127.0.0.1:8080/', 'http://[::1]/', 'http://[::ffff:127.0.0.1]/', 'http://0x7f.1/', 'http://2130706433/', 'https://10.0.0.5/hook', 'http://localhost:3000/']) {
      await expect(checkWebhookUrl(url, strict)).rejects.toThrow(/non-public address/);
    }
  });

  it('allows them with WebhookAllowPrivate', async () => {
    await expect(checkWebhookUrl('http://localhost:3000/hook', { allowPrivate: true })).resolves.toBeInstanceOf(URL);
    await expect(checkWebhookUrl('http://[::1]:8/', { allowPrivate: true })).resolves.toBeInstanceOf(URL);
  });

  it('allows public address literals, and refuses names that do not resolve', async () => {
    await expect(checkWebhookUrl('https://203.0.113.7/hook', strict)).resolves.toBeInstanceOf(URL);
    await expect(checkWebhookUrl('https://no-such-host.invalid/hook', strict)).rejects.toThrow(/does not resolve/);
  });
});

describe('webhookLookup', () => {
  it('fails the connection to a name resolving to loopback, and connects when private addresses are allowed', async () => {
    const server = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const get = (allowPrivate: boolean) =>
      new Promise<string>((resolve, reject) => {
        const req = request({ host: 'localhost', port, family: 4, lookup: webhookLookup({ allowPrivate }) }, (res) => {
          res.resume();
          res.on('end', () => resolve(String(res.statusCode)));
        });
        req.on('error', reject);
        req.end();
      });
    try {
      await expect(get(false)).rejects.toBeInstanceOf(WebhookAddressError);
      await expect(get(true)).resolves.toBe('200');
    } finally {
      server.close();
    }
  });
});
