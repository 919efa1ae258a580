/**
 * The graphql-ws binding on its own (src/gateway/websocket/graphql-ws-binding.ts), for tests with a small schema
 * of their own: a ws server on port 0 served by the binding, a client that keeps every text frame as
 * sent (to compare frames byte for byte), and a poll until a condition holds. Everything is closed
 * when the test finishes.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished, vi } from 'vitest';
import { type ClientOptions, WebSocket, WebSocketServer } from 'ws';
import { serveGraphqlWs } from '../../src/gateway/websocket/graphql-ws-binding.ts';
import { closeOnce } from './loopback.ts';

/** A ws server with the binding on port 0; `dispose` disposes the binding earlier (once). */
export async function bindingForTest(
  options: Parameters<typeof serveGraphqlWs>[0],
  keepAliveMs?: number,
): Promise<{ url: string; wsServer: WebSocketServer; dispose: () => Promise<void> }> {
  const server = createServer();
  const wsServer = new WebSocketServer({ server, clientTracking: false });
  const binding = serveGraphqlWs(options, wsServer, keepAliveMs);
  const dispose = closeOnce(() => binding.dispose());
  onTestFinished(async () => {
    await dispose();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`, wsServer, dispose };
}

/** A graphql-transport-ws socket past its connection_ack; `frames` holds every text frame received. */
export async function initialisedSocket(
  url: string,
  options: ClientOptions = {},
): Promise<{ socket: WebSocket; frames: string[] }> {
  const socket = new WebSocket(url, 'graphql-transport-ws', options);
  onTestFinished(() => socket.terminate());
  const frames: string[] = [];
  socket.on('message', (data) => frames.push(String(data)));
  await once(socket, 'open');
  socket.send(JSON.stringify({ type: 'connection_init' }));
  // Subscribing before the ack is a protocol violation (4401).
  await until(() => frames.length >= 1);
  return { socket, frames };
}

/** Resolves once `check` holds (polled by vitest); fails the test after `timeout` ms. */
export function until(check: () => boolean, timeout = 3000): Promise<void> {
  return vi.waitFor(
    () => {
      if (!check()) throw new Error('not yet');
    },
    { timeout, interval: 10 },
  );
}
