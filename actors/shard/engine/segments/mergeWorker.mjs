// Boot of a merge worker thread (mergeScheduler.ts). Worker threads do not inherit tsx's loader on
// Node 20, and under jest they have no TypeScript transform at all: register tsx here, then load
// the TypeScript worker. Plain JavaScript, so it starts the same under tsx, `node --import tsx`
// and jest.
import { register } from 'tsx/esm/api';

register();
await import('./mergeWorkerMain.ts');
