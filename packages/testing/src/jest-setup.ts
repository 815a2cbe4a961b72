// Loaded by every package's Jest run (see jest.preset.cjs). Keeps service logs quiet in tests.
process.env.LOG_LEVEL ??= 'silent';
