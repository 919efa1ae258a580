/**
 * The differential test of the compiled plans (src/gateway/compiled/): every gateway the test helpers
 * start runs in `verify` mode, so every query of every suite that a plan covers runs both ways and the
 * two answers are compared here. test/setup/plan-comparisons.ts fails the test during which a plan
 * answered other bytes than the engine.
 */
import type { PlanComparison } from '../../src/gateway/compiled/use-compiled-plans.ts';

/** Comparisons seen since the last {@link takePlanComparisons}, in this test file's worker. */
const comparisons: PlanComparison[] = [];

export function recordPlanComparison(comparison: PlanComparison): void {
  comparisons.push(comparison);
}

/** The comparisons recorded so far, and forgets them. */
export function takePlanComparisons(): PlanComparison[] {
  return comparisons.splice(0);
}

/** The first differing byte of two answers, with some context, for a readable failure. */
export function describeDifference(comparison: PlanComparison): string {
  const plan = comparison.plan ?? '';
  const { engine } = comparison;
  let at = 0;
  while (at < plan.length && plan[at] === engine[at]) at++;
  const from = Math.max(0, at - 80);
  return [
    `operation ${comparison.operationName ?? '(anonymous)'}: the compiled plan and the engine differ at byte ${at}`,
    `  plan:   ...${plan.slice(from, at + 80)}`,
    `  engine: ...${engine.slice(from, at + 80)}`,
  ].join('\n');
}
