/**
 * The server around each HTTP floor's one job (http-floor.ts, history-floor.ts, engine-floor.ts):
 * node:http on 127.0.0.1 port 0 with the gateway's keep-alive, each request read to its end and handed
 * to `answer`, its JSON written with 200, anything thrown answered 502 with its text; it announces
 * `floor: http://HOST:PORT/graphql (<label>)` once it listens and closes on SIGTERM.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface FloorServer {
  /** Said after the URL in the announcement, e.g. `reshape, v0`. */
  label: string;
  /** Whether `answer` needs the body (else it is drained unread, as a floor that needs nothing would). */
  readBody: boolean;
  /** The answer's JSON text, or null when `answer` wrote the response itself. */
  answer(req: IncomingMessage, res: ServerResponse, body: string): Promise<string | null>;
  /** Releases the floor's upstream pools on SIGTERM. */
  close(): Promise<unknown>;
}

export function serveFloor(floor: FloorServer): void {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    if (floor.readBody) req.on('data', (chunk: Buffer) => chunks.push(chunk));
    else req.resume();
    req.once('end', async () => {
      try {
        const body =
          chunks.length === 1 ? (chunks[0] as Buffer).toString() : Buffer.concat(chunks).toString();
        const json = await floor.answer(req, res, body);
        if (json === null) return;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(json);
      } catch (error) {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ errors: [{ message: String(error) }] }));
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    console.log(`floor: http://127.0.0.1:${port}/graphql (${floor.label})`);
  });
  process.once('SIGTERM', () => {
    server.close();
    server.closeAllConnections();
    void floor.close().then(() => process.exit(0));
  });
}
