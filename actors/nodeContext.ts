import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { Bus } from '../streams';
import type { Settings } from './config';
import type { Routes } from './wire/rest';
import type { CircuitBreakerService } from './wire/circuitBreaker';

/** Identity of this node as `GET /` and `_nodes/stats` report it. */
export interface NodeIdentity {
  id: string;
  name: string;
  clusterName: string;
  clusterUuid: string;
  host: string;
}

/** What every actor module gets when the system starts it (actors/system.ts builds it). */
export interface NodeContext {
  nc: NatsConnection;
  bus: Bus;
  log: Logger;
  settings: Settings;
  router: Routes;
  node: NodeIdentity;
  /** Folder for node-local files (service_tokens file lives under config/, not here). */
  dataDir: string;
  /** Folder of node config files (ES's config/): service_tokens, JWK sets. */
  configDir: string;
  /** The node's circuit breakers (absent in harnesses that start parts of a node: nothing is accounted). */
  breakers?: CircuitBreakerService;
}
