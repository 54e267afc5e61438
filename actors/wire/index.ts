/**
 * The ground floor every layer may import: Elasticsearch's error vocabulary and its REST bodies
 * (esErrors.ts), and the lossless JSON codec of request bodies and shard messages (json.ts).
 * Nothing here imports from the rest of the project.
 */
export * from './esErrors';
export * from './json';
