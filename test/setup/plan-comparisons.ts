/**
 * Runs after every test (vitest setupFiles): fails it when a compiled plan answered other bytes than
 * the engine for one of its queries (test/helpers/plan-comparisons.ts).
 */
import { afterEach } from 'vitest';
import { describeDifference, takePlanComparisons } from '../helpers/plan-comparisons.ts';

afterEach(() => {
  const differing = takePlanComparisons().filter(
    (comparison) => comparison.plan !== null && comparison.plan !== comparison.engine,
  );
  if (differing.length > 0) throw new Error(differing.map(describeDifference).join('\n'));
});
