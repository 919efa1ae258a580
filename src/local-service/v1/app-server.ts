/**
 * The V1 face of the local service: the app server's route table on the service's port, built over
 * the shared store, tenants and scripted agent, plus the sandboxes whose agent servers listen on their
 * own loopback ports. Health (`/alive`, `/health`) needs no key; `/api/v1/*` needs a configured key
 * when the service has keys (the later app servers' check, 401 `{"detail":"Unauthorized"}`); a request
 * no route takes goes to the web UI's fallback: 200 text/html for a GET (a removed V0 route too), 405
 * for any other method.
 */
import type pino from 'pino';
import { ALIVE_BODY } from '../../contract/common.ts';
import type { ApiResponse, Route } from '../api-route.ts';
import { json, validationError } from '../api-route.ts';
import type { LocalConversationStore } from '../store.ts';
import { validateAddGitProviders } from '../validation/git-providers-body.ts';
import { createV1Agent } from './agent.ts';
import { createAppConversationRoutes } from './app-conversation-routes.ts';
import { createAppEventRoutes } from './app-event-routes.ts';
import { appRecords } from './app-records.ts';
import { utcTimestamp } from './event-factory.ts';
import { createSandboxRoutes } from './sandbox-routes.ts';
import { createSandboxes } from './sandboxes.ts';
import { createStartRoutes } from './start-routes.ts';
import { createStarter } from './start-task.ts';
import { openV1Store } from './store.ts';

/** Timings and limits of the V1 face. */
export interface V1Options {
  /** From a run's start to the agent's answer to each message. */
  replyMs: number;
  /** Each step of a start task. */
  startStepMs: number;
  /** Running sandboxes per tenant; one more pauses the oldest. @default 5 */
  maxRunningSandboxes?: number;
  /** The event socket's wait for an auth frame. @default 10000 */
  socketAuthTimeoutMs?: number;
}

/** The page the web UI's mount answers to any GET no route takes. */
const INDEX_HTML =
  '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>OpenHands</title></head>' +
  '<body><div id="root"></div><!-- the local service imitates the web UI fallback --></body></html>';

function spaFallback(method: string): ApiResponse {
  if (method === 'GET' || method === 'HEAD') {
    return {
      status: 200,
      body: null,
      text: { contentType: 'text/html; charset=utf-8', content: INDEX_HTML },
    };
  }
  return json(405, { detail: 'Method Not Allowed' });
}

/** Builds the V1 face over an open store: its routes, fallback and teardown. */
export function createV1Face(base: LocalConversationStore, options: V1Options, logger: pino.Logger) {
  const store = openV1Store(base);
  store.recoverAfterRestart(utcTimestamp());
  const agent = createV1Agent({ store, replyMs: options.replyMs, logger });
  const sandboxes = createSandboxes({
    store,
    agent,
    logger,
    ...(options.maxRunningSandboxes === undefined ? {} : { maxRunning: options.maxRunningSandboxes }),
    ...(options.socketAuthTimeoutMs === undefined ? {} : { authTimeoutMs: options.socketAuthTimeoutMs }),
  });
  const starter = createStarter({
    store,
    sandboxes,
    agent,
    stepMs: options.startStepMs,
    logger,
    hasProviderToken: (tenant, provider) => {
      const tokens = base.getProviderTokens(tenant) as Record<string, unknown>;
      return provider === null ? Object.keys(tokens).length > 0 : tokens[provider] !== undefined;
    },
  });
  const records = appRecords(store, sandboxes);
  const routes: Route[] = [
    { method: 'GET', pattern: /^\/alive$/, body: 'ignored', handle: () => json(200, ALIVE_BODY) },
    { method: 'GET', pattern: /^\/health$/, body: 'ignored', handle: () => json(200, 'OK') },
    ...createStartRoutes({ store, starter, records }),
    ...createAppConversationRoutes({ store, sandboxes, agent, records }),
    ...createSandboxRoutes({ store, sandboxes, records }),
    ...createAppEventRoutes(store),
    {
      method: 'POST',
      pattern: /^\/api\/v1\/secrets\/git-providers$/,
      body: 'required',
      handle: (request) => {
        const validated = validateAddGitProviders(request.body);
        if (!validated.ok) return validationError(validated.issues);
        const tokens: Parameters<typeof base.setProviderTokens>[1] = {};
        for (const [provider, value] of Object.entries(validated.value.provider_tokens)) {
          if (value)
            tokens[provider as keyof typeof tokens] = { token: value.token, host: value.host ?? null };
        }
        base.setProviderTokens(request.tenant, tokens);
        return json(200, { message: 'Git providers stored' });
      },
    },
    {
      method: 'DELETE',
      pattern: /^\/api\/v1\/secrets\/git-providers$/,
      body: 'ignored',
      handle: (request) => {
        base.clearProviderTokens(request.tenant);
        return json(200, { message: 'Unset Git provider tokens' });
      },
    },
  ];
  return {
    routes,
    unmatched: spaFallback,
    /** Stops starts in progress, agent steps and every agent server. */
    async close(): Promise<void> {
      starter.close();
      agent.close();
      await sandboxes.close();
    },
  };
}
