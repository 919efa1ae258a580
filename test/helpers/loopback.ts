/**
 * The listening and closing every hand-written test server shares (the upstream doubles, the recording
 * proxy, the socket harness): 127.0.0.1 on port 0, and a close that also cuts kept-alive connections.
 */
import { readFileSync } from 'node:fs';
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
 * A port nothing listens on right now (tried, then released): for a server a test starts later on a
 * known address, e.g. an upstream the gateway already points at. It is drawn below the kernel's
 * ephemeral range, because a port from that range (what `listen(0)` hands out) can meanwhile become the
 * local end of any outgoing connection of the parallel test files, and the later `listen` then fails
 * with EADDRINUSE (seen in CI). Below the range only another test's explicit listen can take it.
 */
export async function freeLoopbackPort(): Promise<number> {
  const ceiling = ephemeralRangeStart();
  const floor = Math.min(20_000, ceiling - 1_000);
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = floor + Math.floor(Math.random() * (ceiling - floor));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free loopback port found in ${floor}..${ceiling - 1}`);
}

/** The first port of the kernel's ephemeral range (Linux's /proc, else its default 32768). */
function ephemeralRangeStart(): number {
  try {
    const first = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    );
    if (Number.isInteger(first) && first > 2_000) return first;
  } catch {
    // not Linux: the default below
  }
  return 32_768;
}

/** Whether 127.0.0.1:`port` can be listened on now; the probe is closed before this answers. */
async function canListen(port: number): Promise<boolean> {
  const probe = createServer();
  const listening = await new Promise<boolean>((resolve) => {
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (listening) await new Promise<void>((resolve) => probe.close(() => resolve()));
  return listening;
}
