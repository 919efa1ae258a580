/**
 * The listening and closing every hand-written test server shares (the upstream doubles, the recording
 * proxy, the socket harness): 127.0.0.1 on port 0, and a close that also cuts kept-alive connections.
 */
import type { Server } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';

/** Listens on 127.0.0.1, port 0; answers `http://127.0.0.1:PORT`. */
export async function listenOnLoopback(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Stops `server` accepting connections and cuts the open ones; resolves once it is closed. */
export function stopServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** `close`, run at most once: later calls answer the first call's promise. */
export function closeOnce(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= close();
    return closing;
  };
}

/**
 * A port nothing listens on right now (asked of the OS, then released): for a server a test starts
 * later on a known address, e.g. an upstream the gateway already points at.
 */
export async function freeLoopbackPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
