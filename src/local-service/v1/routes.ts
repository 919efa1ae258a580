/**
 * The V1 app server's route table, on the service's port: health (`/alive`, `/health`, no key), start
 * tasks, app conversations (and their git proxies), sandboxes, the events search and the git provider
 * secrets. `/api/v1/*`
 * needs a configured key when the service has keys (the later app servers' check, 401
 * `{"detail":"Unauthorized"}`); a request no route takes goes to the web UI's fallback
 * ({@link spaFallback}): 200 text/html for a GET (a removed V0 route too), 405 for any other method.
 */
import { ALIVE_BODY } from '../../contract/common.ts';
import type { ApiResponse, Route } from '../api-route.ts';
import { json, validationError } from '../api-route.ts';
import type { ProviderTokens } from '../database.ts';
import { validateAddGitProviders } from '../validation/git-providers-body.ts';
import type { V1Agent } from './agent.ts';
import { createAppConversationRoutes } from './app-conversation-routes.ts';
import { createAppEventRoutes } from './app-event-routes.ts';
import { createAppGitRoutes } from './app-git-routes.ts';
import type { AppRecords } from './app-records.ts';
import { createSandboxRoutes } from './sandbox-routes.ts';
import type { Sandboxes } from './sandboxes.ts';
import { createStartRoutes } from './start-routes.ts';
import type { Starter } from './start-task.ts';
import type { V1Store } from './store.ts';

/** What the app server's routes need. */
export interface RouteDeps {
  store: V1Store;
  /** The tenants' git provider tokens (the shared database's). */
  tokens: ProviderTokens;
  sandboxes: Sandboxes;
  agent: V1Agent;
  starter: Starter;
  records: AppRecords;
}

/** The page the web UI's mount answers to any GET no route takes. */
const INDEX_HTML =
  '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>OpenHands</title></head>' +
  '<body><div id="root"></div><!-- the local service imitates the web UI fallback --></body></html>';

/** The answer to a request no route takes: the web UI's mount. */
export function spaFallback(method: string): ApiResponse {
  if (method === 'GET' || method === 'HEAD') {
    return {
      status: 200,
      body: null,
      text: { contentType: 'text/html; charset=utf-8', content: INDEX_HTML },
    };
  }
  return json(405, { detail: 'Method Not Allowed' });
}

/** Builds the app server's route table. */
export function createRoutes(deps: RouteDeps): Route[] {
  const { store, tokens: providerTokens, sandboxes, agent, starter, records } = deps;
  return [
    { method: 'GET', pattern: /^\/alive$/, body: 'ignored', handle: () => json(200, ALIVE_BODY) },
    { method: 'GET', pattern: /^\/health$/, body: 'ignored', handle: () => json(200, 'OK') },
    ...createStartRoutes({ store, starter, records }),
    ...createAppConversationRoutes({ store, sandboxes, agent, records }),
    ...createAppGitRoutes({ store, sandboxes }),
    ...createSandboxRoutes({ store, sandboxes, records }),
    ...createAppEventRoutes(store),
    {
      method: 'POST',
      pattern: /^\/api\/v1\/secrets\/git-providers$/,
      body: 'required',
      handle: (request) => {
        const validated = validateAddGitProviders(request.body);
        if (!validated.ok) return validationError(validated.issues);
        const tokens: Parameters<typeof providerTokens.setProviderTokens>[1] = {};
        for (const [provider, value] of Object.entries(validated.value.provider_tokens)) {
          if (value)
            tokens[provider as keyof typeof tokens] = { token: value.token, host: value.host ?? null };
        }
        providerTokens.setProviderTokens(request.tenant, tokens);
        return json(200, { message: 'Git providers stored' });
      },
    },
    {
      method: 'DELETE',
      pattern: /^\/api\/v1\/secrets\/git-providers$/,
      body: 'ignored',
      handle: (request) => {
        providerTokens.clearProviderTokens(request.tenant);
        return json(200, { message: 'Unset Git provider tokens' });
      },
    },
  ];
}
