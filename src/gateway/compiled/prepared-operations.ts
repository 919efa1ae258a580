/**
 * Queries and mutations the HTTP fast path has parsed and validated once, run again without envelop.
 *
 * Envelop builds its pipeline per request: a hook object per plugin, its parse, validate and context
 * hooks, then each plugin's onExecute with its setters, the promise helpers between them and their
 * `onExecuteDone` hooks in a second pass, about a tenth of a list request's CPU (docs/performance.md).
 * A prepared operation has done the per-document part once (the parsed and validated document, its
 * graphql-jit compilation, its plan, its description for the observers) and each request runs the rest
 * in straight code, in envelop's order and with the same parts:
 *
 *  1. the observers' watches start (observability/operation-observer.ts);
 *  2. the guards refuse or wrap (protection/operation-guard.ts: variables, budget, rate limit, shutdown,
 *     deadline); a refusal is the answer;
 *  3. graphql-jit's compiled query runs (behind the document's compiled plan when plans are on), inside
 *     the observers' `run`;
 *  4. suggestions are stripped when hidden, the observers learn the errors, and errors of an executed
 *     operation are masked as Yoga masks them (a refusal is a coded error and passes as it is).
 *
 * A text it has not prepared, or that does not validate, runs through envelop (http-fast-path.ts), and
 * the parts above are shared with that path, not copied: test/gateway/prepared-operations.test.ts
 * compares both paths' answers for the same requests, refusals and failures included.
 */
import { type DocumentNode, type ExecutionResult, type GraphQLSchema, getOperationAST } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import type { GatewayContext } from '../../schema/context.ts';
import type { OperationObservers } from '../observability/operation-observer.ts';
import {
  enterGuards,
  firstRefusal,
  type GuardedArgs,
  type OperationGuard,
} from '../protection/operation-guard.ts';
import { resultWithoutSuggestions } from '../protection/suggestions.ts';
import { LEAF_SERIALIZERS } from './leaf-serializers.ts';
import { isThenable } from './thenable.ts';
import { type CompiledPlansOptions, type Execute, withCompiledPlan } from './use-compiled-plans.ts';

/** A result as graphql-jit answers it: with the serializer compiled for its document. */
export type PreparedResult = ExecutionResult & { stringify?: (value: unknown) => string };

/** One document and operation name, ready to run. */
export interface PreparedOperation {
  readonly document: DocumentNode;
  readonly operationName: string | undefined;
  /** graphql-jit's compiled query (behind its plan when plans are on). */
  readonly execute: Execute;
}

/** Options of {@link PreparedOperations}. */
export interface PreparedOperationsOptions {
  schema: GraphQLSchema;
  /** The guards, in the order envelop runs their plugins (hardening.ts). */
  guards: readonly OperationGuard[];
  observers: OperationObservers;
  compiledPlans: CompiledPlansOptions;
  /** Suggestions are stripped from results (FIELD_SUGGESTIONS=false). */
  hideSuggestions: boolean;
  /** Yoga's context function (yoga.ts): the gateway's part of an operation's context. */
  context(initial: InitialContext): GatewayContext;
  /** Yoga's masking of an executed operation's errors (logs what it masks). */
  maskResult(result: ExecutionResult): ExecutionResult;
  /**
   * Texts kept in each of the table's two generations (see {@link PreparedOperations}).
   * @default 1000 (Yoga's parse cache holds as many)
   */
  maxEntries?: number;
}

/** What envelop's context starts from for a request: Yoga's context function adds the gateway's to it. */
export interface InitialContext {
  /** The part of a fetch Request the context function and the plugins read. */
  readonly request: {
    readonly headers: Pick<Headers, 'get'>;
    readonly signal: AbortSignal;
    readonly url: string;
  };
  readonly params: { readonly variables?: Record<string, unknown> | null | undefined };
}

const DEFAULT_MAX_ENTRIES = 1000;

/** Query text -> operation name ('' for none) -> operation; null: runs through envelop only. */
type PreparedTable = Map<string, Map<string, PreparedOperation | null>>;

/**
 * The prepared operations of one gateway, by query text and operation name, in two generations: new
 * texts go into the current one; when it is full it becomes the previous one and the one before is
 * dropped, and a text found in the previous one moves back to the current one. So a text in use stays
 * prepared however many other texts arrive (a caller cycling through thousands of distinct documents
 * cannot make every other caller's operations be compiled again), at the cost of a Map lookup, not of
 * an LRU's reordering on every request.
 */
export class PreparedOperations {
  readonly #options: PreparedOperationsOptions;
  readonly #maxEntries: number;
  #current: PreparedTable = new Map();
  #previous: PreparedTable = new Map();

  constructor(options: PreparedOperationsOptions) {
    this.#options = options;
    this.#maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  }

  /** The operation prepared for this text and name; undefined when not seen yet, null when it has none. */
  get(query: string, operationName: string | null | undefined): PreparedOperation | null | undefined {
    let byName = this.#current.get(query);
    if (byName === undefined) {
      byName = this.#previous.get(query);
      if (byName === undefined) return undefined;
      // In use again: back into the current generation, so the next turn over does not drop it.
      this.#previous.delete(query);
      this.#currentWithRoom().set(query, byName);
    }
    return byName.get(operationName ?? '');
  }

  /**
   * Prepares a text the fast path parsed and validated (`document`, Yoga's cached parse of it). A
   * subscription, or a document graphql-jit does not compile, gets null: envelop runs it.
   */
  prepare(
    query: string,
    operationName: string | null | undefined,
    document: DocumentNode,
  ): PreparedOperation | null {
    const { schema } = this.#options;
    const name = operationName ?? undefined;
    const operation = getOperationAST(document, name);
    let prepared: PreparedOperation | null = null;
    if (operation != null && operation.operation !== 'subscription') {
      const compiled = compileQuery(schema, document, name, { customSerializers: LEAF_SERIALIZERS });
      if (isCompiledQuery(compiled)) {
        // graphql-jit's executor as @envelop/graphql-jit installs it: the result carries its serializer.
        const engine: Execute = (args) => {
          const result = compiled.query(args.rootValue, args.contextValue, args.variableValues);
          if (!isThenable(result)) return withStringify(result, compiled.stringify);
          return (result as Promise<ExecutionResult>).then((settled) =>
            withStringify(settled, compiled.stringify),
          );
        };
        prepared = {
          document,
          operationName: name,
          execute: withCompiledPlan(
            this.#options.compiledPlans,
            { schema, document, operationName: name },
            engine,
          ),
        };
      }
    }
    let byName = this.#current.get(query) ?? this.#previous.get(query);
    if (!byName) {
      byName = new Map();
      this.#currentWithRoom().set(query, byName);
    }
    byName.set(operationName ?? '', prepared);
    return prepared;
  }

  /** Texts kept now, both generations (tests). */
  get size(): number {
    return this.#current.size + this.#previous.size;
  }

  /** The current generation, with room for a text it does not hold: when full it becomes the previous one. */
  #currentWithRoom(): PreparedTable {
    if (this.#current.size >= this.#maxEntries) {
      this.#previous = this.#current;
      this.#current = new Map();
    }
    return this.#current;
  }

  /**
   * Runs a prepared operation: context, observers, guards, execution, masking, in envelop's order.
   * Throws what the context function or an execute function throws, as envelop does.
   */
  async run(operation: PreparedOperation, initial: InitialContext): Promise<PreparedResult> {
    const { schema, observers, guards, hideSuggestions } = this.#options;
    // As envelop's context: the initial object, with the context function's members assigned to it.
    const contextValue = Object.assign(initial, this.#options.context(initial)) as GatewayContext;
    const args: GuardedArgs = {
      schema,
      document: operation.document,
      contextValue,
      variableValues: initial.params.variables,
      operationName: operation.operationName,
    };
    const watches = observers.watchExecute(operation.document, operation.operationName);
    // The guards' parts run in this function's frame, not in one async function each: a request
    // waiting on the upstream holds less heap for the young generation's scavenges to copy.
    let refusal = firstRefusal(guards, args);
    if (refusal instanceof Promise) refusal = await refusal;
    let result: ExecutionResult;
    if (refusal) result = refusal;
    else {
      const exit = enterGuards(guards, args);
      try {
        const execute = operation.execute;
        result = (await (watches.wraps
          ? watches.run(() => execute(args))
          : execute(args))) as ExecutionResult;
      } finally {
        exit();
      }
    }
    const refused = refusal !== null;
    const answer = hideSuggestions ? (resultWithoutSuggestions(result) ?? result) : result;
    const errors = answer.errors ?? NO_ERRORS;
    watches.answered(errors);
    watches.ended(errors);
    // Yoga masks only what executed: its masking plugin comes after the guards, which a refusal stops.
    return refused ? answer : this.#options.maskResult(answer);
  }
}

const NO_ERRORS: readonly unknown[] = Object.freeze([]);

function withStringify(result: ExecutionResult, stringify: (value: unknown) => string): PreparedResult {
  (result as PreparedResult).stringify = stringify;
  return result;
}
