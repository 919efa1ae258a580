/**
 * One operation fanning out to many upstream calls (nodes(ids:) runs one GET per id, in parallel) must
 * not make Node print MaxListenersExceededWarning: every call listens on the operation's abort signal.
 * The gateway printed one warning (with a stack) per such operation before; under load that was ~8% of
 * its CPU and a stderr line per request.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { encodeGlobalId } from '../../src/schema/global-id.ts';
import { gatewayForTest } from '../helpers/gateway.ts';
import { post } from '../helpers/http.ts';
import { localServiceForTest } from '../helpers/local-service.ts';

describe('abort listeners of one operation', () => {
  it('answers nodes(ids:) with 15 distinct ids without a MaxListenersExceededWarning', async () => {
    const service = await localServiceForTest();
    const gateway = await gatewayForTest({ upstreamUrl: service.url });
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    onTestFinished(() => {
      process.off('warning', onWarning);
    });

    // Unknown ids: each still costs one upstream GET (404 -> null), all 15 at once.
    const ids = Array.from({ length: 15 }, (_, i) => encodeGlobalId('Conversation', `missing${i}`));
    const answer = await post(gateway.url, {
      query: 'query Many($ids: [ID!]!) { nodes(ids: $ids) { id } }',
      variables: { ids },
    });
    expect(answer.json?.errors).toBeUndefined();
    expect(answer.json?.data?.nodes).toEqual(ids.map(() => null));
    // Warnings are emitted on a later tick.
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });
});
