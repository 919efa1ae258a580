/**
 * Every header the gateway reads a credential from is one a browser page may send, one that lets a
 * form post past CSRF prevention only because it forces a preflight, one a stream is counted under and
 * one no log line shows. X-Access-Token (hosted OpenHands' API key) is the case in point: it was read
 * but missing from the CORS allowed headers, the CSRF exemption, the transport guard and the log
 * redaction. Over real sockets, in front of a scripted V0 double that answers only that token (the local
 * service does not take X-Access-Token) or, for streams, the local service without keys.
 * test/gateway/credential-headers-browser.test.ts plays the browser parts in a real browser.
 */
import { Writable } from 'node:stream';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createLogger } from '../../src/gateway/observability/logging.ts';
import { seedConversation } from '../helpers/both-apis-live.ts';
import { gatewayForTest, serviceAndGatewayForTest } from '../helpers/gateway.ts';
import { hostileRecord, searchPage, startHostileUpstream } from '../helpers/hostile-upstream.ts';
import { codes, post } from '../helpers/http.ts';

const APP = 'https://app.example.com';
const FOREIGN = 'https://evil.example';
const TOKEN = 'hosted-access-token-0001';
const DEFAULT_KEY = 'gateway-default-key-0002';
const LIST = '{ conversations(first: 5) { edges { node { title } } } }';

/**
 * A gateway with a default key (what makes a foreign page dangerous: it would need no key of its own)
 * and CORS_ORIGINS = APP, in front of a double whose conversation list answers only TOKEN.
 */
async function setup() {
  const upstream = await startHostileUpstream();
  onTestFinished(() => upstream.close());
  upstream.on('GET', '/api/conversations', (request) =>
    request.headers['x-access-token'] === TOKEN
      ? { json: searchPage([hostileRecord({ title: 'Read with the access token' })]) }
      : { status: 401, json: { detail: 'Unauthorized' } },
  );
  const gateway = await gatewayForTest({
    upstreamUrl: upstream.url,
    upstreamApi: 'v0',
    defaultSessionApiKey: DEFAULT_KEY,
    hardening: { corsOrigins: [APP] },
  });
  return { upstream, gateway };
}

/** The preflight a browser sends before a POST that carries `headers`. */
async function preflight(url: string, origin: string, headers: string) {
  const response = await fetch(url, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': headers },
  });
  return {
    status: response.status,
    allowOrigin: response.headers.get('access-control-allow-origin'),
    allowHeaders: (response.headers.get('access-control-allow-headers') ?? '')
      .split(',')
      .map((name) => name.trim().toLowerCase()),
  };
}

describe('X-Access-Token from a browser page', () => {
  it('a CORS_ORIGINS page may send it: the preflight allows it and the request answers what that token reads', async () => {
    const { upstream, gateway } = await setup();
    const allowed = await preflight(gateway.url, APP, 'content-type,x-access-token');
    expect(allowed.status).toBe(204);
    expect(allowed.allowOrigin).toBe(APP);
    expect(allowed.allowHeaders).toEqual(
      expect.arrayContaining(['content-type', 'x-session-api-key', 'authorization', 'x-access-token']),
    );

    const answer = await post(gateway.url, { query: LIST }, { origin: APP, 'x-access-token': TOKEN });
    expect(answer.headers.get('access-control-allow-origin')).toBe(APP);
    expect({ status: answer.status, body: answer.json }).toEqual({
      status: 200,
      body: { data: { conversations: { edges: [{ node: { title: 'Read with the access token' } }] } } },
    });
    // The caller's token went upstream, not the gateway's default key.
    const sent = upstream.requests.find((request) => request.path === '/api/conversations');
    expect(sent?.headers['x-access-token']).toBe(TOKEN);
    expect(sent?.headers['x-session-api-key']).toBeUndefined();
  });

  it('a foreign page still cannot: its preflight is not allowed, and the form posts it can send without one are CSRF_REJECTED', async () => {
    const { upstream, gateway } = await setup();
    // A form post carrying X-Access-Token is not a simple request: the browser asks first, and the
    // answer allows another origin only, so the browser never sends the post.
    const asked = await preflight(gateway.url, FOREIGN, 'x-access-token');
    expect(asked.allowOrigin).toBe(APP);
    // Without the header the browser sends it at once; the gateway refuses it before any operation.
    const form = `query=${encodeURIComponent(LIST)}`;
    const multipart = new FormData();
    multipart.set('operations', JSON.stringify({ query: LIST }));
    multipart.set('map', '{}');
    const bodies: Array<[string, RequestInit]> = [
      ['urlencoded', { body: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } }],
      ['multipart', { body: multipart }],
    ];
    for (const [name, init] of bodies) {
      const response = await fetch(gateway.url, {
        ...init,
        method: 'POST',
        headers: { ...(init.headers as Record<string, string>), origin: FOREIGN },
      });
      const text = await response.text();
      expect({ name, status: response.status, code: JSON.parse(text).errors[0].extensions.code }).toEqual({
        name,
        status: 403,
        code: 'CSRF_REJECTED',
      });
    }
    expect(upstream.requests).toHaveLength(0);
    expect(gateway.calls).toHaveLength(0);
  });

  it('lets a form post that carries X-Access-Token past CSRF prevention, as the other credential headers (it forces a preflight)', async () => {
    const { gateway } = await setup();
    const form = `query=${encodeURIComponent(LIST)}`;
    const urlencoded = { 'content-type': 'application/x-www-form-urlencoded' };
    expect(codes(await post(gateway.url, form, urlencoded))).toEqual(['CSRF_REJECTED']);
    const answer = await post(gateway.url, form, { ...urlencoded, 'x-access-token': TOKEN });
    expect({ status: answer.status, codes: codes(answer) }).toEqual({ status: 200, codes: [] });
    expect(answer.json?.data).toEqual({
      conversations: { edges: [{ node: { title: 'Read with the access token' } }] },
    });
  });
});

describe('streams per X-Access-Token', () => {
  it('counts an SSE stream under its own token, not under the caller without one', async () => {
    const { gateway, service } = await serviceAndGatewayForTest({
      transportLimits: { maxStreamsPerCredential: 1 },
    });
    const id = await seedConversation('v0', service.url);
    const subscription = `subscription($id: ID!) { conversationEvents(conversationId: $id) { __typename } }`;
    const open = async (token: string) => {
      const abort = new AbortController();
      onTestFinished(() => abort.abort());
      const response = await fetch(gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-access-token': token },
        body: JSON.stringify({ query: subscription, variables: { id } }),
        signal: abort.signal,
      });
      return response.status;
    };
    expect(await open('token-a')).toBe(200);
    // Another token holds its own slot; the same token's second stream is over its maximum.
    expect(await open('token-b')).toBe(200);
    expect(await open('token-a')).toBe(429);
  });
});

describe('log redaction of credential headers', () => {
  it('a logged header bag shows no credential header’s value', () => {
    const lines: string[] = [];
    const logger = createLogger({
      destination: new Writable({
        write(chunk, _encoding, callback) {
          lines.push(String(chunk));
          callback();
        },
      }),
    });
    const headers = {
      'x-session-api-key': 'session-key-0003',
      authorization: 'Bearer bearer-token-0004',
      'x-access-token': 'access-token-0005',
      accept: 'application/json',
    };
    logger.info({ headers, req: { headers } }, 'a request');
    const logged = JSON.parse(lines.join('')) as { headers: object; req: { headers: object } };
    const redacted = {
      'x-session-api-key': '[redacted]',
      authorization: '[redacted]',
      'x-access-token': '[redacted]',
      accept: 'application/json',
    };
    expect(logged.headers).toEqual(redacted);
    expect(logged.req.headers).toEqual(redacted);
  });
});
