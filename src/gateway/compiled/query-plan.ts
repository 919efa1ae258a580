/**
 * A compiled plan of one query document: the selection tree resolved once per document into the
 * steps each object of the answer takes (which resolver, which arguments, how its value completes),
 * run without a GraphQL engine. It calls the schema's own resolvers, serializers, `isTypeOf` and
 * `resolveType`, each object's fields in the order graphql-jit answers them (field-order.ts), and
 * builds the same `data` as graphql-jit for every answer it can give.
 *
 * It gives only the happy path: the first thing the engine would turn into a GraphQL error (a resolver
 * that throws or rejects, null where the schema says non-null, a value a scalar or enum cannot
 * serialize, a runtime type that is not possible, a list that is not an array, a property that is a
 * function) ends the plan with {@link PlanAbandoned}, and the caller runs the engine instead
 * (use-compiled-plans.ts), which answers with its own errors, paths and partial data. Documents it does
 * not cover (not a query, any directive, introspection) get no plan at all.
 */
import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLAbstractType,
  type GraphQLField,
  type GraphQLFieldResolver,
  type GraphQLLeafType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  getArgumentValues,
  getOperationAST,
  getVariableValues,
  isAbstractType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  visit,
} from 'graphql';
import { FRESH_EACH_READ } from '../../schema/plan-hints.ts';
import { type CollectedFields, collectFieldsAsJit } from './field-order.ts';
import { isThenable } from './thenable.ts';

/** Thrown where the engine would answer with an error: the caller runs the engine instead. */
class PlanAbandoned extends Error {
  constructor(reason: string) {
    super(`compiled plan abandoned: ${reason}`);
    this.name = 'PlanAbandoned';
  }
}

/** graphql-js's response path (graphql/jsutils/Path). */
interface Path {
  readonly prev: Path | undefined;
  readonly key: string | number;
  readonly typename: string | undefined;
}

/** How a field's value becomes its part of the answer. */
type Completion =
  | { readonly kind: 'leaf'; readonly nonNull: boolean; readonly type: GraphQLLeafType }
  | { readonly kind: 'object'; readonly nonNull: boolean; readonly shape: ObjectShape }
  | {
      readonly kind: 'abstract';
      readonly nonNull: boolean;
      readonly type: GraphQLAbstractType;
      /** The shape of each runtime type, compiled on first use. */
      readonly byType: Map<string, ObjectShape>;
      readonly fieldNodes: readonly FieldNode[];
    }
  | { readonly kind: 'list'; readonly nonNull: boolean; readonly item: Completion };

/** One response key of an object. */
interface Step {
  readonly key: string;
  readonly fieldName: string;
  readonly fieldNodes: readonly FieldNode[];
  /** Null for `__typename`. */
  readonly field: GraphQLField<unknown, unknown> | null;
  readonly resolve: GraphQLFieldResolver<unknown, unknown> | undefined;
  /** The field takes arguments from the document (coerced per run: variables may feed them). */
  readonly hasArguments: boolean;
  readonly completion: Completion | null;
}

/** An object of the answer: its type, its steps, and the function compiled for them (compileShape). */
interface ObjectShape {
  readonly type: GraphQLObjectType;
  readonly steps: readonly Step[];
  readonly execute: (
    execution: Execution,
    source: unknown,
    path: Path | undefined,
  ) => MaybePromise<Record<string, unknown>>;
}

/** What one run of a plan needs. */
interface PlanRun {
  readonly rootValue: unknown;
  readonly contextValue: unknown;
  readonly variableValues: Readonly<Record<string, unknown>> | null | undefined;
}

/** A compiled query. */
export interface QueryPlan {
  /** The answer's `data`; rejects with {@link PlanAbandoned} (or what a resolver threw) where the engine would answer an error. */
  execute(run: PlanRun): Promise<Record<string, unknown>>;
}

/** Everything a run shares: what resolvers see in `info`, and the run's arguments. */
interface Execution {
  readonly schema: GraphQLSchema;
  readonly fragments: Record<string, FragmentDefinitionNode>;
  readonly operation: OperationDefinitionNode;
  readonly rootValue: unknown;
  readonly contextValue: unknown;
  readonly variableValues: Record<string, unknown>;
}

/**
 * The plan of `document`'s operation `operationName`, or null when it is not a query or uses what the
 * plan does not cover (directives, whose effect depends on variables; introspection).
 */
export function compileQueryPlan(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
): QueryPlan | null {
  const operation = getOperationAST(document, operationName);
  if (operation?.operation !== 'query') return null;
  const queryType = schema.getQueryType();
  if (!queryType || !coverable(document)) return null;
  const fragments: Record<string, FragmentDefinitionNode> = Object.create(null);
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
  }
  const rootFields = collectFieldsAsJit(schema, fragments, queryType, [operation.selectionSet]);
  const rootShape = shapeOf(schema, fragments, queryType, rootFields);
  if (rootShape === null) return null;
  const definitions = operation.variableDefinitions ?? [];

  return {
    async execute(run) {
      let variableValues: Record<string, unknown> = {};
      if (definitions.length > 0) {
        const coerced = getVariableValues(schema, definitions, run.variableValues ?? {}, { maxErrors: 1 });
        if (coerced.errors) throw new PlanAbandoned('variables');
        variableValues = coerced.coerced;
      }
      const execution: Execution = {
        schema,
        fragments,
        operation,
        rootValue: run.rootValue,
        contextValue: run.contextValue,
        variableValues,
      };
      return await rootShape.execute(execution, run.rootValue, undefined);
    },
  };
}

/** No directives anywhere (their effect depends on variables), no introspection field. */
function coverable(document: DocumentNode): boolean {
  let covered = true;
  visit(document, {
    Directive() {
      covered = false;
    },
    Field(node) {
      if (node.name.value === '__schema' || node.name.value === '__type') covered = false;
    },
  });
  return covered;
}

function shapeOf(
  schema: GraphQLSchema,
  fragments: Record<string, FragmentDefinitionNode>,
  parentType: GraphQLObjectType,
  fields: CollectedFields,
): ObjectShape | null {
  const steps: Step[] = [];
  for (const [key, fieldNodes] of fields) {
    const fieldName = (fieldNodes[0] as FieldNode).name.value;
    if (fieldName === '__typename') {
      steps.push({
        key,
        fieldName,
        fieldNodes,
        field: null,
        resolve: undefined,
        hasArguments: false,
        completion: null,
      });
      continue;
    }
    const field = parentType.getFields()[fieldName];
    // A field whose every read answers anew (a freshly sealed link) is left to the engine: two runs
    // could not be compared byte for byte.
    if (!field || field.extensions?.[FRESH_EACH_READ] === true) return null;
    const completion = completionOf(schema, fragments, field.type, fieldNodes);
    if (completion === null) return null;
    steps.push({
      key,
      fieldName,
      fieldNodes,
      field,
      resolve: field.resolve,
      hasArguments: field.args.length > 0,
      completion,
    });
  }
  return { type: parentType, steps, execute: compileShape(parentType, steps) };
}

function completionOf(
  schema: GraphQLSchema,
  fragments: Record<string, FragmentDefinitionNode>,
  type: GraphQLOutputType,
  fieldNodes: readonly FieldNode[],
): Completion | null {
  const nonNull = isNonNullType(type);
  const named = nonNull ? type.ofType : type;
  if (isListType(named)) {
    const item = completionOf(schema, fragments, named.ofType, fieldNodes);
    return item && { kind: 'list', nonNull, item };
  }
  if (isLeafType(named)) return { kind: 'leaf', nonNull, type: named };
  if (isObjectType(named)) {
    const shape = shapeOf(schema, fragments, named, subfields(schema, fragments, named, fieldNodes));
    return shape && { kind: 'object', nonNull, shape };
  }
  if (isAbstractType(named)) return { kind: 'abstract', nonNull, type: named, byType: new Map(), fieldNodes };
  return null;
}

function subfields(
  schema: GraphQLSchema,
  fragments: Record<string, FragmentDefinitionNode>,
  type: GraphQLObjectType,
  fieldNodes: readonly FieldNode[],
): CollectedFields {
  return collectFieldsAsJit(
    schema,
    fragments,
    type,
    fieldNodes.map((node) => node.selectionSet),
  );
}

type MaybePromise<T> = T | Promise<T>;

/**
 * The function that runs one object's steps, compiled for them: every resolver called in order, then
 * their values completed. Generated code, as graphql-jit's: the answer object is made by one literal
 * with its keys in the answer's order (a single hidden class), and a field read from the source's own
 * property (no resolver, a leaf) is read by its literal name, so each such read site sees one shape.
 * Everything else goes through {@link executeField}.
 */
function compileShape(type: GraphQLObjectType, steps: readonly Step[]): ObjectShape['execute'] {
  const literal: string[] = [];
  const body: string[] = [];
  steps.forEach((step, index) => {
    const key = JSON.stringify(step.key);
    if (step.completion === null) {
      literal.push(`${key}: ${JSON.stringify(type.name)}`);
      return;
    }
    literal.push(`${key}: null`);
    if (!step.resolve && step.completion.kind === 'leaf') {
      body.push(
        `value = own[${JSON.stringify(step.fieldName)}];`,
        `result[${key}] = value == null ? h.missing(steps[${index}]) : h.leaf(steps[${index}], value);`,
      );
    } else {
      body.push(
        `value = h.field(execution, type, steps[${index}], source, path);`,
        `if (h.isThenable(value)) (pending ??= []).push(h.settleInto(result, ${key}, value));`,
        `else result[${key}] = value;`,
      );
    }
  });
  const code = `return function execute(execution, source, path) {
  if (typeof source === 'function') return h.abandon('a function as a source');
  // graphql-js's default resolver reads nothing from a primitive (or absent) source.
  const own = typeof source === 'object' && source !== null ? source : h.none;
  let pending = null;
  let value;
  const result = { ${literal.join(', ')} };
  ${body.join('\n  ')}
  return pending === null ? result : Promise.all(pending).then(() => result);
};`;
  return new Function('h', 'type', 'steps', code)(SHAPE_HELPERS, type, steps);
}

/** What the compiled shapes call. */
const SHAPE_HELPERS = {
  none: Object.freeze(Object.create(null)) as Record<string, never>,
  isThenable,
  settleInto,
  abandon(reason: string): never {
    throw new PlanAbandoned(reason);
  },
  /** A leaf read from the source's property. */
  leaf(step: Step, value: unknown): unknown {
    if (typeof value === 'function') throw new PlanAbandoned('function-valued property');
    if (value instanceof Error) throw new PlanAbandoned('an Error as a value');
    const serialized = (step.completion as Extract<Completion, { kind: 'leaf' }>).type.serialize(value);
    if (serialized === null || serialized === undefined) throw new PlanAbandoned('unserializable leaf');
    return serialized;
  },
  /** Null or undefined read from the source's property. */
  missing(step: Step): null {
    if ((step.completion as Completion).nonNull) throw new PlanAbandoned('null in a non-null position');
    return null;
  },
  field: executeField,
};

/**
 * A field being executed, and the `info` its resolver, `isTypeOf` and `resolveType` get: one object
 * per field execution, whose parts are read from the step and the run when something reads them (most
 * resolvers read none), and whose response path is made only when read.
 */
class FieldInfo implements GraphQLResolveInfo {
  readonly #execution: Execution;
  readonly #step: Step;
  readonly #parentPath: Path | undefined;
  #path: Path | undefined;
  readonly parentType: GraphQLObjectType;

  constructor(execution: Execution, parentType: GraphQLObjectType, step: Step, parentPath: Path | undefined) {
    this.#execution = execution;
    this.#step = step;
    this.#parentPath = parentPath;
    this.parentType = parentType;
  }
  get execution(): Execution {
    return this.#execution;
  }
  get fieldName(): string {
    return this.#step.fieldName;
  }
  get fieldNodes(): readonly FieldNode[] {
    return this.#step.fieldNodes;
  }
  get returnType(): GraphQLOutputType {
    return (this.#step.field as GraphQLField<unknown, unknown>).type;
  }
  get path(): Path {
    this.#path ??= { prev: this.#parentPath, key: this.#step.key, typename: this.parentType.name };
    return this.#path;
  }
  get schema(): GraphQLSchema {
    return this.#execution.schema;
  }
  get fragments(): Record<string, FragmentDefinitionNode> {
    return this.#execution.fragments;
  }
  get rootValue(): unknown {
    return this.#execution.rootValue;
  }
  get operation(): OperationDefinitionNode {
    return this.#execution.operation;
  }
  get variableValues(): Record<string, unknown> {
    return this.#execution.variableValues;
  }
}

function executeField(
  execution: Execution,
  parentType: GraphQLObjectType,
  step: Step,
  source: unknown,
  parentPath: Path | undefined,
): unknown {
  const completion = step.completion as Completion;
  const info = new FieldInfo(execution, parentType, step, parentPath);
  let value: unknown;
  if (step.resolve) {
    const args = step.hasArguments
      ? getArgumentValues(
          step.field as GraphQLField<unknown, unknown>,
          step.fieldNodes[0] as FieldNode,
          execution.variableValues,
        )
      : {};
    value = step.resolve(source, args, execution.contextValue, info);
  } else {
    value = defaultProperty(source, step.fieldName);
  }
  if (isThenable(value)) return completeLater(completion, value, info);
  return complete(completion, value, info, undefined);
}

function completeLater(
  completion: Completion,
  value: PromiseLike<unknown>,
  info: FieldInfo,
  itemPath?: Path,
): Promise<unknown> {
  return Promise.resolve(value).then((resolved) => complete(completion, resolved, info, itemPath));
}

/** graphql-js's default resolver, minus calling a function-valued property (left to the engine). */
function defaultProperty(source: unknown, fieldName: string): unknown {
  if ((typeof source !== 'object' || source === null) && typeof source !== 'function') return undefined;
  const property = (source as Record<string, unknown>)[fieldName];
  if (typeof property === 'function') throw new PlanAbandoned('function-valued property');
  return property;
}

/**
 * `value` completed as `completion`: the field's own value (`itemPath` undefined) or an item of one of
 * its lists (`itemPath` the item's response path).
 */
function complete(
  completion: Completion,
  value: unknown,
  info: FieldInfo,
  itemPath: Path | undefined,
): unknown {
  if (value instanceof Error) throw new PlanAbandoned('an Error as a value');
  if (value === null || value === undefined) {
    if (completion.nonNull) throw new PlanAbandoned('null in a non-null position');
    return null;
  }
  switch (completion.kind) {
    case 'leaf': {
      const serialized = completion.type.serialize(value);
      if (serialized === null || serialized === undefined) throw new PlanAbandoned('unserializable leaf');
      return serialized;
    }
    case 'list':
      return completeList(completion.item, value, info, itemPath ?? info.path);
    case 'object':
      return completeObject(completion.shape, value, info, itemPath ?? info.path);
    case 'abstract':
      return completeAbstract(completion, value, info, itemPath ?? info.path);
  }
}

function completeList(
  item: Completion,
  value: unknown,
  info: FieldInfo,
  path: Path,
): MaybePromise<unknown[]> {
  if (!Array.isArray(value)) throw new PlanAbandoned('a list that is not an array');
  const items = new Array<unknown>(value.length);
  let pending: Array<PromiseLike<unknown>> | undefined;
  for (let index = 0; index < value.length; index++) {
    const itemPath: Path = { prev: path, key: index, typename: undefined };
    const entry = value[index] as unknown;
    const completed = isThenable(entry)
      ? completeLater(item, entry, info, itemPath)
      : complete(item, entry, info, itemPath);
    if (isThenable(completed)) {
      items[index] = null;
      pending ??= [];
      pending.push(settleInto(items, index, completed));
    } else {
      items[index] = completed;
    }
  }
  return pending ? Promise.all(pending).then(() => items) : items;
}

/** Puts the value of `pending` at `key` of `target` once known. */
function settleInto(
  target: Record<string | number, unknown> | unknown[],
  key: string | number,
  pending: PromiseLike<unknown>,
): PromiseLike<void> {
  return pending.then((value) => {
    (target as Record<string | number, unknown>)[key] = value;
  });
}

function completeObject(
  shape: ObjectShape,
  value: unknown,
  info: FieldInfo,
  path: Path,
): MaybePromise<Record<string, unknown>> {
  const { type } = shape;
  const { execution } = info;
  if (type.isTypeOf) {
    const isType = type.isTypeOf(value, execution.contextValue, info);
    if (isThenable(isType)) throw new PlanAbandoned('an asynchronous isTypeOf');
    if (!isType) throw new PlanAbandoned(`a value that is not a ${type.name}`);
  }
  return shape.execute(execution, value, path);
}

function completeAbstract(
  completion: Extract<Completion, { kind: 'abstract' }>,
  value: unknown,
  info: FieldInfo,
  path: Path,
): MaybePromise<Record<string, unknown>> {
  const { execution } = info;
  const { schema } = execution;
  const abstract = completion.type;
  const typeName = abstract.resolveType
    ? abstract.resolveType(value, execution.contextValue, info, abstract)
    : defaultTypeName(abstract, value, info);
  if (typeof typeName !== 'string') throw new PlanAbandoned('a runtime type that is not a name');
  const runtimeType = schema.getType(typeName);
  if (!isObjectType(runtimeType) || !schema.isSubType(abstract, runtimeType)) {
    throw new PlanAbandoned(`${typeName} is not a possible ${abstract.name}`);
  }
  let shape = completion.byType.get(typeName);
  if (shape === undefined) {
    const collected = subfields(schema, execution.fragments, runtimeType, completion.fieldNodes);
    const compiled = shapeOf(schema, execution.fragments, runtimeType, collected);
    if (compiled === null) throw new PlanAbandoned(`fields of ${typeName}`);
    shape = compiled;
    completion.byType.set(typeName, shape);
  }
  return completeObject(shape, value, info, path);
}

/** graphql-js's defaultTypeResolver, synchronous `isTypeOf` only. */
function defaultTypeName(abstract: GraphQLAbstractType, value: unknown, info: FieldInfo): unknown {
  const { execution } = info;
  const own = (value as { __typename?: unknown }).__typename;
  if (typeof value === 'object' && typeof own === 'string') return own;
  for (const candidate of execution.schema.getPossibleTypes(abstract)) {
    if (!candidate.isTypeOf) continue;
    const isType = candidate.isTypeOf(value, execution.contextValue, info);
    if (isThenable(isType)) throw new PlanAbandoned('an asynchronous isTypeOf');
    if (isType) return candidate.name;
  }
  return undefined;
}
