// The layering check (README "Architecture": folder map). `npm run layering` runs it; `npm test`
// runs it first (scripts/test.mjs) and test/unit/house/layering.test.ts shows it catching an
// upward import and a circle.
//
// Rooms, top to bottom: a room imports only rooms below it, never one above; no circles, type-only
// imports included (the swc parser reads `import type` as an import). Paths are prefixes, so new
// subfolders (actors/shard/engine/segments/, …) belong to their room without a change here.
const ROOMS = [
  ['scripts', '^scripts/'], // entry points and CLIs: nothing imports them
  ['console', '^actors/console/'], // the web console: page, API routes, live feed
  ['system', '^actors/system\\.ts$'], // connect NATS, start actors, stop in reverse
  ['bus', '^actors/(bus/|(embeddedNats|natsCluster)\\.ts$)'], // the node's nats-server, its users and TLS
  ['compaction', '^actors/compaction/'], // ES_STATE: compacted credentials and contexts, retention of ES_EVT
  ['edge', '^actors/edge/'], // HTTP: router, body limits, routes that parse and render
  ['security', '^actors/security/'], // authenticator chain, realms, credentials, authorization
  ['search', '^actors/search/'], // the search service: search, PIT, scroll, coordinator, shard client
  ['contexts', '^actors/contexts/'], // registry of PIT/scroll actors, directory, checkpoint
  ['cluster', '^actors/cluster/'], // membership, allocation, metadata, leases
  ['shard', '^actors/shard/'], // shard actors; engine/ is pure
  ['tls', '^actors/tls/'], // certificates and the HTTPS settings of the edge
  ['node', '^actors/(nodeContext|config|knownSettings|checksummedFile)\\.ts$'], // what every actor is given
  ['automaton', '^actors/automaton/'], // Lucene regexps, wildcards, globs
  ['streams', '^streams/'], // subjects, envelopes, the event log, replay readers
  ['machines', '^machines/'], // pure XState machines
  ['wire', '^actors/wire/'], // the ground floor: ES errors, JSON, time values, REST and security types
];

const above = (i) => `(${ROOMS.slice(0, i).map(([, p]) => p.slice(1)).join('|')})`;
const upward = ROOMS.slice(1).map(([name, path], i) => ({
  name: `${name}-not-upward`,
  comment: `${name} imports only rooms below it`,
  severity: 'error',
  from: { path },
  to: { path: `^${above(i + 1)}` },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {

  forbidden: [
    { name: 'no-circular', comment: 'no import circle, type-only imports included', severity: 'error', from: {}, to: { circular: true } },
    ...upward,
    {
      name: 'in-a-room',
      comment: 'every source file belongs to a room (add new top-level files to ROOMS)',
      severity: 'error',
      from: { path: '^(actors|machines|streams|scripts)/', pathNot: ROOMS.map(([, p]) => p).join('|') },
      to: {},
    },
    {
      name: 'machines-pure',
      comment: 'machines/ imports only xstate, other machines and the ground-floor type modules',
      severity: 'error',
      from: { path: '^machines/' },
      to: { pathNot: '^(machines/|node_modules/xstate/|actors/wire/(envelope|security)\\.ts$)' },
    },
    {
      name: 'engine-pure',
      comment: 'actors/shard/engine/ (any subfolder) imports only itself, wire/ and automaton/',
      severity: 'error',
      from: { path: '^actors/shard/engine/' },
      to: { path: '^(actors|streams|machines|scripts)/', pathNot: '^actors/(shard/engine|wire|automaton)/' },
    },
    {
      name: 'resolvable',
      comment: 'every relative import resolves to a file',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true, path: '^\\.' },
    },
  ],
  options: {
    // TypeScript 7 has no JS API: parse with swc (in the tree for jest), which keeps `import type`.
    parser: 'swc',
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/' },
    enhancedResolveOptions: { extensions: ['.ts', '.mjs', '.js'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
