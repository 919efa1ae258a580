/**
 * src/gateway/protection/operation-guard.ts as prepared operations call it: the first refusal in
 * guard order (a later guard not asked), and enters and exits in the order envelop's wrapped execute
 * functions run them (the last guard outermost), also when an `enter` throws.
 */
import { describe, expect, it } from 'vitest';
import {
  enterGuards,
  firstRefusal,
  type GuardedArgs,
  type OperationGuard,
} from '../../src/gateway/protection/operation-guard.ts';

const ARGS = {} as GuardedArgs;

function recordingGuard(
  name: string,
  log: string[],
  options: { throwsOnEnter?: boolean } = {},
): OperationGuard {
  return {
    enter: () => {
      log.push(`enter ${name}`);
      if (options.throwsOnEnter) throw new Error(`${name} failed`);
      return () => log.push(`exit ${name}`);
    },
  };
}

describe('firstRefusal', () => {
  it('answers the first refusal in order, waiting for an asynchronous one, and asks no guard after it', async () => {
    const asked: string[] = [];
    const refusal = { errors: [] };
    const asking =
      (name: string, answer: ReturnType<NonNullable<OperationGuard['refuse']>>): OperationGuard['refuse'] =>
      () => {
        asked.push(name);
        return answer;
      };
    const guards: OperationGuard[] = [
      { refuse: asking('a', null) },
      { refuse: asking('b', Promise.resolve(null)) },
      { refuse: asking('c', Promise.resolve(refusal)) },
      { refuse: asking('d', null) },
    ];
    expect(await firstRefusal(guards, ARGS)).toBe(refusal);
    expect(asked).toEqual(['a', 'b', 'c']);
  });

  it('is synchronous and null when every guard lets the operation go on synchronously', () => {
    expect(firstRefusal([{ refuse: () => null }, {}], ARGS)).toBeNull();
  });
});

describe('enterGuards', () => {
  it('enters the last guard first and exits innermost first, as nested wrappers would', () => {
    const log: string[] = [];
    const exit = enterGuards([recordingGuard('a', log), {}, recordingGuard('b', log)], ARGS);
    log.push('execute');
    exit();
    expect(log).toEqual(['enter b', 'enter a', 'execute', 'exit a', 'exit b']);
  });

  it('when an enter throws, exits the guards entered before it and throws', () => {
    const log: string[] = [];
    const guards = [
      recordingGuard('a', log),
      recordingGuard('b', log, { throwsOnEnter: true }),
      recordingGuard('c', log),
    ];
    expect(() => enterGuards(guards, ARGS)).toThrow('b failed');
    expect(log).toEqual(['enter c', 'enter b', 'exit c']);
  });
});
