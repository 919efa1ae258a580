/**
 * Cross-site WebSocket hijacking and DNS rebinding, over real sockets: a page on a foreign origin
 * cannot upgrade to graphql-ws or open an SSE stream (403 ORIGIN_REJECTED before any operation), while
 * non-browser clients (no Origin), the gateway's own pages (GraphiQL) and CORS_ORIGINS can; on a
 * loopback listen address or with a default key, a foreign Host is refused (HOST_REJECTED). Also: empty or whitespace keys are "no
 * credential" on HTTP and graphql-ws alike.
 */
import { describe, expect, it } from 'vitest';
import { gatewayForTest, serviceAndGatewayForTest, type startTestGateway } from '../helpers/gateway.ts';
import { runOverWs, tryUpgrade, wsClient } from '../helpers/graphql-ws.ts';
import { codes, httpRequest, post, postWithHost } from '../helpers/http.ts';
import { localServiceForTest } from '../helpers/local-service.ts';

const KEY = 'origin-test-key';
const LIST = '{ conversations(first: 1) { edges { node { id } } } }';
const LISTED = { data: { conversations: { edges: [] } } };

async function setup(options: Omit<Parameters<typeof startTestGateway>[0], 'upstreamUrl'> = {}) {
  const { gateway } = await serviceAndGatewayForTest({
    service: { sessionApiKeys: [KEY] },
    // The default key is what makes hijacking dangerous: the foreign page needs no key of its own.
    defaultSessionApiKey: KEY,
    ...options,
  });
  const host = new URL(gateway.url).host;
  return { gateway, host, ownOrigin: `http://${host}` };
}

function ws(url: string, headers: Record<string, string>, params: Record<string, unknown> = {}) {
  const client = wsClient(url, { headers: headers, connectionParams: params });
  return client;
}

/** An SSE request as a page's EventSource sends it (GET, Accept: text/event-stream). */
async function eventSourceGet(url: string, headers: Record<string, string>) {
  const response = await fetch(`${url}?query=${encodeURIComponent('{ __typename }')}`, {
    headers: { accept: 'text/event-stream', ...headers },
  });
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

describe('Origin check on the WebSocket upgrade', () => {
  it('refuses a browser-like upgrade from a foreign origin with 403 ORIGIN_REJECTED before the handshake', async () => {
    const { gateway } = await setup();
    const refused = await tryUpgrade(gateway.url, { origin: 'https://evil.example' });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toEqual({
      errors: [{ message: expect.stringContaining('CORS_ORIGINS'), extensions: { code: 'ORIGIN_REJECTED' } }],
    });
    // `null` (sandboxed frames, file: pages) and look-alikes of the gateway's own origin are foreign too.
    const port = new URL(gateway.url).port;
    for (const origin of [
      'null',
      `http://127.0.0.1.evil.example:${port}`,
      `http://127.0.0.1:${Number(port) + 1}`,
    ]) {
      expect((await tryUpgrade(gateway.url, { origin })).status, origin).toBe(403);
    }
    expect(gateway.calls).toHaveLength(0);
  });

  it('lets through no Origin, the gateway’s own origin (GraphiQL) and a CORS_ORIGINS entry, and the operation runs', async () => {
    const { gateway, ownOrigin } = await setup({ hardening: { corsOrigins: ['https://app.example.com'] } });
    const allowed: Array<Record<string, string>> = [
      {},
      { origin: ownOrigin },
      { origin: 'https://app.example.com' },
    ];
    for (const headers of allowed) {
      expect(await runOverWs(ws(gateway.url, headers), LIST), JSON.stringify(headers)).toEqual(LISTED);
    }
    expect((await tryUpgrade(gateway.url, { origin: 'https://other.example.com' })).status).toBe(403);
  });

  it('lets any origin through with CORS_ORIGINS=*', async () => {
    const { gateway } = await setup({ hardening: { corsOrigins: ['*'] } });
    expect(await runOverWs(ws(gateway.url, { origin: 'https://anywhere.example' }), LIST)).toEqual(LISTED);
  });
});

describe('Origin check on SSE and GET', () => {
  it('refuses an SSE request (GET as EventSource sends it, or POST) from a foreign origin with 403 ORIGIN_REJECTED', async () => {
    const { gateway, ownOrigin } = await setup();
    const get = await eventSourceGet(gateway.url, { origin: 'https://evil.example' });
    expect(get.status).toBe(403);
    expect(JSON.parse(get.text).errors[0].extensions.code).toBe('ORIGIN_REJECTED');
    const viaPost = await post(
      gateway.url,
      { query: LIST },
      { accept: 'text/event-stream', origin: 'https://evil.example' },
    );
    expect({ status: viaPost.status, codes: codes(viaPost) }).toEqual({
      status: 403,
      codes: ['ORIGIN_REJECTED'],
    });

    for (const headers of [{}, { origin: ownOrigin }] as Array<Record<string, string>>) {
      const ok = await eventSourceGet(gateway.url, headers);
      expect(ok.status).toBe(200);
      expect(ok.type).toContain('text/event-stream');
      expect(ok.text).toContain('"__typename":"Query"');
    }
  });

  it('never runs a mutation over GET, whatever the Origin (Yoga answers 405)', async () => {
    const { gateway } = await setup();
    const mutation = encodeURIComponent('mutation { __typename }');
    for (const origin of [undefined, 'https://evil.example']) {
      const response = await fetch(`${gateway.url}?query=${mutation}`, {
        headers: { accept: 'application/graphql-response+json', ...(origin ? { origin } : {}) },
      });
      expect(response.status, String(origin)).toBe(405);
    }
  });

  it('leaves plain JSON requests to CORS (a foreign page cannot send them without a preflight)', async () => {
    const { gateway } = await setup();
    const answer = await post(gateway.url, { query: LIST }, { origin: 'https://evil.example' });
    expect(answer.status).toBe(200);
  });
});

describe('Host check (ALLOWED_HOSTS, DNS rebinding)', () => {
  const code = (text: string) =>
    (JSON.parse(text) as { errors: Array<{ extensions: { code: string } }> }).errors[0]?.extensions.code;

  /**
   * A rebinding page is same-origin under its own name: Origin and Host both say evil.example. Its
   * POST and its upgrade are refused with HOST_REJECTED before anything reaches the upstream.
   */
  async function expectRebindingRefused(gateway: { url: string; calls: readonly unknown[] }) {
    const port = new URL(gateway.url).port;
    const rebound = { host: `evil.example:${port}`, origin: `http://evil.example:${port}` };
    const answer = await postWithHost(gateway.url, LIST, rebound.host);
    expect({ status: answer.status, code: code(answer.text) }).toEqual({
      status: 403,
      code: 'HOST_REJECTED',
    });
    const upgrade = await tryUpgrade(gateway.url, rebound);
    expect({ status: upgrade.status, code: code(upgrade.body) }).toEqual({
      status: 403,
      code: 'HOST_REJECTED',
    });
    expect(gateway.calls).toHaveLength(0);
    return { port, rebound };
  }

  it('with a default key, refuses a foreign Host on /graphql (HTTP and upgrade) and keeps loopback names', async () => {
    const { gateway } = await setup();
    const { port, rebound } = await expectRebindingRefused(gateway);

    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `LOCALHOST.:${port}`, `[::1]:${port}`]) {
      const ok = await postWithHost(gateway.url, LIST, host);
      expect({ host, status: ok.status, body: JSON.parse(ok.text) }).toEqual({
        host,
        status: 200,
        body: LISTED,
      });
    }
    // Probes address the gateway by whatever name they like: only /graphql is checked.
    expect(
      (await httpRequest(new URL('/health', gateway.url).href, { headers: { host: rebound.host } })).status,
    ).toBe(200);
  });

  it('is on with a default key when ALLOWED_HOSTS is unset (null, as the config passes it)', async () => {
    const { gateway } = await setup({ transportLimits: { allowedHosts: null } });
    expect((await postWithHost(gateway.url, '{ __typename }', 'evil.example')).status).toBe(403);
  });

  it('is on without a default key too when listening on loopback, and ALLOWED_HOSTS sets the names explicitly', async () => {
    // The quick start: a local upstream that needs no key, so a rebinding page needs none either.
    const service = await localServiceForTest();
    const keyless = await gatewayForTest({ upstreamUrl: service.url });
    const { port } = await expectRebindingRefused(keyless);
    expect((await postWithHost(keyless.url, LIST, `localhost:${port}`)).status).toBe(200);
    const anyHost = await gatewayForTest({
      upstreamUrl: service.url,
      transportLimits: { allowedHosts: ['*'] },
    });
    expect((await postWithHost(anyHost.url, '{ __typename }', 'anything.example')).status).toBe(200);

    const { gateway } = await setup({ transportLimits: { allowedHosts: ['gateway.example.com'] } });
    expect((await postWithHost(gateway.url, '{ __typename }', 'gateway.example.com')).status).toBe(200);
    expect((await postWithHost(gateway.url, '{ __typename }', 'localhost')).status).toBe(403);
  });
});

describe('empty credentials', () => {
  it('an empty or whitespace key is no credential over HTTP and graphql-ws alike (the default key applies)', async () => {
    const { gateway } = await setup();
    for (const key of ['', '   ', '\t']) {
      const http = await post(gateway.url, { query: LIST }, { 'x-session-api-key': key });
      expect({ key, status: http.status, body: http.json }).toEqual({ key, status: 200, body: LISTED });
      // GraphiQL's default headers object is exactly {"X-Session-API-Key": ""}.
      for (const params of [{ 'X-Session-API-Key': key }, { sessionApiKey: key }, { Authorization: key }]) {
        expect(await runOverWs(ws(gateway.url, {}, params), LIST), JSON.stringify(params)).toEqual(LISTED);
      }
    }
  });

  it('without a default key, an empty key on either transport is the same UNAUTHENTICATED from the upstream', async () => {
    const { gateway } = await setup({ defaultSessionApiKey: null });
    const http = await post(gateway.url, { query: LIST }, { 'x-session-api-key': ' ' });
    const overWs = await runOverWs(ws(gateway.url, {}, { 'X-Session-API-Key': ' ' }), LIST);
    expect(codes(http)).toEqual(['UNAUTHENTICATED']);
    expect(overWs).toMatchObject({
      data: { conversations: null },
      errors: [{ extensions: { code: 'UNAUTHENTICATED' } }],
    });
  });
});
