/** The cleanup stack of the hardening tests (to be replaced by onTestFinished). */

import { startTestGateway, type TestGatewayOptions } from '../helpers/gateway.ts';
import { startTestLocalService } from '../helpers/local-service.ts';
/** A LIFO list of cleanups, run by `run()` in afterEach. */
export function cleanupStack() {
  const stack: Array<() => unknown> = [];
  return {
    add<T>(value: T, cleanup: (value: T) => unknown): T {
      stack.push(() => cleanup(value));
      return value;
    },
    async run() {
      while (stack.length > 0) await stack.pop()?.();
    },
  };
}

/**
 * The real local service and a gateway with `hardening` in front of it, both closed by `cleanup` (the
 * suite's {@link cleanupStack}, run in afterEach), gateway first.
 */
export async function startServiceAndGateway(
  cleanup: ReturnType<typeof cleanupStack>,
  hardening: TestGatewayOptions['hardening'] = {},
) {
  const service = cleanup.add(await startTestLocalService(), (s) => s.close());
  const gateway = cleanup.add(await startTestGateway({ upstreamUrl: service.url, hardening }), (g) =>
    g.close(),
  );
  return { service, gateway };
}
