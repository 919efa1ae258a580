/**
 * The fields of an object in the order graphql-jit answers them (the engine the compiled plans fall
 * back to, whose bytes they must repeat): a selection set's own fields first, then its fragments', the
 * fragments taken last first (graphql-jit's collectFields walks a stack). graphql-js answers in the
 * order the fields are written, fragments in place; the two differ as soon as a fragment precedes a
 * field, as in Relay's queries. Fields are merged by response key; each named fragment is taken once.
 * The plans cover no directives, so nothing here is conditional.
 */
import {
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLSchema,
  isAbstractType,
  Kind,
  type NamedTypeNode,
  type SelectionSetNode,
  typeFromAST,
} from 'graphql';

/** Response key -> the field nodes under it, in answer order. */
export type CollectedFields = Map<string, FieldNode[]>;

/** The fields of `selectionSets` on an object of `runtimeType`, as graphql-jit collects them. */
export function collectFieldsAsJit(
  schema: GraphQLSchema,
  fragments: Record<string, FragmentDefinitionNode>,
  runtimeType: GraphQLObjectType,
  selectionSets: ReadonlyArray<SelectionSetNode | undefined>,
): CollectedFields {
  const fields: CollectedFields = new Map();
  const visitedFragments = new Set<string>();
  for (const selectionSet of selectionSets) {
    if (selectionSet === undefined) continue;
    const stack: SelectionSetNode[] = [selectionSet];
    for (let current = stack.pop(); current !== undefined; current = stack.pop()) {
      for (const selection of current.selections) {
        if (selection.kind === Kind.FIELD) {
          const key = selection.alias?.value ?? selection.name.value;
          const nodes = fields.get(key);
          if (nodes) nodes.push(selection);
          else fields.set(key, [selection]);
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          if (conditionMatches(schema, selection.typeCondition, runtimeType))
            stack.push(selection.selectionSet);
        } else {
          const name = selection.name.value;
          if (visitedFragments.has(name)) continue;
          visitedFragments.add(name);
          const fragment = fragments[name];
          if (fragment && conditionMatches(schema, fragment.typeCondition, runtimeType)) {
            stack.push(fragment.selectionSet);
          }
        }
      }
    }
  }
  return fields;
}

function conditionMatches(
  schema: GraphQLSchema,
  condition: NamedTypeNode | undefined,
  runtimeType: GraphQLObjectType,
): boolean {
  if (!condition) return true;
  const conditionType = typeFromAST(schema, condition);
  if (conditionType === runtimeType) return true;
  return (
    conditionType !== undefined &&
    isAbstractType(conditionType) &&
    schema.isSubType(conditionType, runtimeType)
  );
}
