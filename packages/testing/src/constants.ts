/** Password of factory users unless one is given. */
export const TEST_PASSWORD = 'correct-horse-battery';

/** CRYPTO_SECRET of test runs (jest-setup.ts exports it), so factories and services agree on channel keys. */
export const TEST_CRYPTO_SECRET = 'modelgate-test-crypto-secret-32-chars';
