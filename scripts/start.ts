/**
 * `npm start`: one node on http://127.0.0.1:9200 (HOST, PORT). NATS_URL connects to a running
 * nats-server; without it a local nats-server child is started with JetStream under DATA_DIR.
 */
import { startSystem } from '../actors/system';

const sys = await startSystem().catch((e: Error) => {
  console.error(e.message);
  process.exit(1);
});
let stopping = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    if (stopping) return;
    stopping = true;
    sys.ctx.log.info({ sig }, 'shutting down');
    void sys.stop().then(() => process.exit(0));
  });
}
