// Three projects by folder: unit (no NATS), int (real nats-server), e2e (official client).
// @swc/jest transforms TypeScript (ts-jest needs the TS JS API, which TypeScript 7 lacks) and also the
// ESM-only packages (uuid, jose) so jest can run everything as CommonJS.
const swc = ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }];
const common = {
  // Only test/ is searched: a node started in this clone writes data/snapshots/*.snap, which jest
  // would otherwise take for obsolete jest snapshots (and exit 1).
  roots: ['<rootDir>/test'],
  transform: { '^.+\\.(t|j|mj)s$': swc },
  transformIgnorePatterns: ['/node_modules/(?!(uuid|jose)/)'],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
  testEnvironment: 'node',
};
module.exports = {
  // testTimeout is a global option (ignored inside projects): NATS-backed suites on a busy 2-core box need room.
  testTimeout: 60000,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    { ...common, displayName: 'int', testMatch: ['<rootDir>/test/int/**/*.test.ts'] },
    { ...common, displayName: 'e2e', testMatch: ['<rootDir>/test/e2e/**/*.test.ts'] },
  ],
};
