/**
 * graphql-http's GraphQL-over-HTTP audits against the real gateway (in front of the real local service).
 * Every MUST/SHOULD audit passes: no "error" results. Warnings (MAY items) are printed, not hidden.
 */
import { serverAudits } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startTestLocalService, type TestLocalService } from '../helpers/local-service.ts';

let service: TestLocalService;
let gateway: TestGateway;

beforeAll(async () => {
  service = await startTestLocalService();
  gateway = await startTestGateway({ upstreamUrl: service.url });
});
afterAll(async () => {
  await gateway?.close();
  await service?.close();
});

describe('graphql-http server audits', () => {
  // The audit list is static; the URL is read when each audit runs.
  for (const audit of serverAudits({ url: () => gateway.url })) {
    it(audit.name, async () => {
      const result = await audit.fn();
      if (result.status === 'warn') console.warn(`audit warning: ${audit.name}: ${result.reason}`);
      expect(result.status === 'error' ? `${result.reason}` : 'ok').toBe('ok');
    });
  }
});
