// Loaded by every package's Jest run (see jest.preset.cjs). Keeps service logs quiet in tests, and
// gives services and test factories the same CRYPTO_SECRET.
import { TEST_CRYPTO_SECRET } from './constants';

process.env.LOG_LEVEL ??= 'silent';
process.env.CRYPTO_SECRET ??= TEST_CRYPTO_SECRET;
