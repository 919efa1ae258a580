/**
 * Socket.IO clients of the local service for one test, closed when the test finishes (the service
 * itself: localServiceForTest in test/helpers/local-service.ts).
 */
import { onTestFinished } from 'vitest';
import { openClient, type RecordingClient } from './socket-harness.ts';

/** {@link openClient}, closed when the current test finishes. */
export function socketClientForTest(
  url: string,
  query: Record<string, string>,
  transports?: Array<'websocket' | 'polling'>,
): RecordingClient {
  const client = openClient(url, query, transports);
  onTestFinished(() => client.close());
  return client;
}
