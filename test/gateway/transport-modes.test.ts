/**
 * What the gateway does with transport modes it does not support, so clients configured for them fail
 * fast with a coded answer instead of hanging: batching (a JSON array body) and graphql-sse's
 * single-connection mode (a PUT that reserves a stream). Real gateway, real local service.
 */
import { describe, expect, it } from 'vitest';
import { gatewayForTest } from '../helpers/gateway.ts';
import { localServiceForTest } from '../helpers/local-service.ts';

async function setup() {
  const service = await localServiceForTest();
  return gatewayForTest({ upstreamUrl: service.url });
}

describe('unsupported transport modes', () => {
  it('refuses a batch (array body) with 400 BATCHING_NOT_SUPPORTED and runs none of its operations', async () => {
    const gateway = await setup();
    const batch = [
      { query: '{ conversations(first: 1) { edges { cursor } } }' },
      { query: 'mutation { unsetProviderTokens { statusMessage } }' },
    ];
    for (const accept of ['application/json', 'application/graphql-response+json']) {
      const response = await fetch(gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept },
        body: JSON.stringify(batch),
      });
      expect({ accept, status: response.status, body: await response.json() }).toEqual({
        accept,
        status: 400,
        body: {
          errors: [
            {
              message:
                'Batching (an array of operations in one request) is not supported: send one operation per request.',
              extensions: { code: 'BATCHING_NOT_SUPPORTED' },
            },
          ],
        },
      });
    }
    expect(gateway.calls).toHaveLength(0);
    // A single operation on the same connection still runs.
    const single = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(batch[0]),
    });
    expect(await single.json()).toEqual({ data: { conversations: { edges: [] } } });
  });

  it("refuses graphql-sse's single-connection reservation (PUT) with 405, so such a client fails at once", async () => {
    const gateway = await setup();
    const reservation = await fetch(gateway.url, { method: 'PUT' });
    expect(reservation.status).toBe(405);
    expect(reservation.headers.get('allow')).toBe('GET, POST');
    expect(await reservation.json()).toEqual({
      errors: [
        { message: 'GraphQL only supports GET and POST requests.', extensions: { code: 'BAD_REQUEST' } },
      ],
    });
  });
});
