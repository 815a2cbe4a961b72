import { decryptSecret, encryptSecret, SecretDecryptionError, sha256Hex } from '../src/crypto';

const SECRET = 'unit-test-crypto-secret';

function replacePart(sealed: string, index: number, edit: (bytes: Buffer) => void): string {
  const parts = sealed.split('.');
  const part = parts[index];
  if (part === undefined) throw new Error(`no part ${index} in ${sealed}`);
  const bytes = Buffer.from(part, 'base64url');
  edit(bytes);
  parts[index] = bytes.toString('base64url');
  return parts.join('.');
}

describe('encryptSecret / decryptSecret', () => {
  it('round-trips text, including non-ASCII and empty strings', () => {
    for (const plaintext of ['sk-upstream-0123456789', 'JBSWY3DPEHPK3PXP', 'clé ключ 鍵 🔑', '']) {
      expect(decryptSecret(encryptSecret(plaintext, SECRET), SECRET)).toBe(plaintext);
    }
  });

  it('produces v1.<iv>.<tag>.<data> in base64url, with a fresh IV every time', () => {
    const first = encryptSecret('same text', SECRET);
    const second = encryptSecret('same text', SECRET);
    expect(first).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]+$/);
    expect(first).not.toBe(second);
    expect(first).not.toContain(Buffer.from('same text').toString('base64url'));
  });

  it('rejects a ciphertext whose data, tag or IV was altered', () => {
    const sealed = encryptSecret('sk-upstream-secret', SECRET);
    for (const index of [1, 2, 3]) {
      const tampered = replacePart(sealed, index, (bytes) => {
        bytes.writeUInt8(bytes.readUInt8(0) ^ 0x01, 0);
      });
      expect(() => decryptSecret(tampered, SECRET)).toThrow(SecretDecryptionError);
    }
  });

  it('rejects a ciphertext sealed under another CRYPTO_SECRET', () => {
    const sealed = encryptSecret('sk-upstream-secret', SECRET);
    expect(() => decryptSecret(sealed, 'another-secret')).toThrow('cannot decrypt secret: authentication failed');
  });

  it('rejects malformed input without echoing it', () => {
    for (const bad of ['', 'plain text', 'v2.a.b.c', 'v1.only.three', 'v1.AAAA.BBBB.CCCC']) {
      expect(() => decryptSecret(bad, SECRET)).toThrow(SecretDecryptionError);
    }
    try {
      decryptSecret('v1.c2VjcmV0.c2VjcmV0.c2VjcmV0', SECRET);
    } catch (err) {
      expect((err as Error).message).not.toContain('c2VjcmV0');
    }
  });
});

describe('sha256Hex', () => {
  it('is the lowercase hex SHA-256 of the UTF-8 text', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});
