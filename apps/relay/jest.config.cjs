const preset = require('../../jest.preset.cjs')(__dirname);

// music-metadata exports ESM under `import` / `module-sync` only (Node's require takes the latter);
// Jest resolves neither, so it is pointed at the entry and transpiled like the preset's ESM packages.
module.exports = {
  ...preset,
  moduleNameMapper: { ...preset.moduleNameMapper, '^music-metadata$': '<rootDir>/node_modules/music-metadata/lib/index.js' },
};
