import { createServer } from 'node:net';

/**
 * Tries to listen on `host:port` and lets go at once: undefined when the node can bind there, else a
 * message saying which address is taken and what to do. Run before anything is bootstrapped, so a
 * taken port never costs a generated password.
 */
export function checkPort(host: string, port: number): Promise<string | undefined> {
  return new Promise((res) => {
    const srv = createServer();
    srv.once('error', (e: NodeJS.ErrnoException) => {
      const at = `${host}:${port}`;
      if (e.code === 'EADDRINUSE') {
        res(`port ${port} on ${host} is already in use (another node, or \`npm start\` still running?): stop what listens there (\`ss -ltnp 'sport = :${port}'\` shows it), or start this node with another PORT, e.g. PORT=${port === 9200 ? 9201 : port + 1} npm start`);
      } else if (e.code === 'EACCES') {
        res(`not allowed to listen on ${at} (ports below 1024 need root): use a higher PORT`);
      } else if (e.code === 'EADDRNOTAVAIL' || e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN') {
        res(`cannot listen on ${at}: HOST [${host}] is not an address of this machine`);
      } else res(`cannot listen on ${at}: ${e.message}`);
    });
    srv.listen({ host, port, exclusive: true }, () => srv.close(() => res(undefined)));
  });
}

/** PORT as a number in 0..65535, or a message. */
export function parsePort(text: string | undefined, fallback = 9200): number | string {
  if (text === undefined || text === '') return fallback;
  const n = Number(text);
  return /^\d+$/.test(text) && n <= 65535 ? n : `PORT [${text}] is not a port number (0-65535)`;
}
