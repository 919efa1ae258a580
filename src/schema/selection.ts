/**
 * Whether an operation selected a field of a resolver's result: lets a resolver skip work (or choose a
 * cheaper upstream route) when nobody reads its answer. Conservative: a field under an inline fragment,
 * a named fragment or an @include/@skip counts as selected.
 */
import { type GraphQLResolveInfo, Kind, type SelectionSetNode } from 'graphql';

/** True when any selection under the current field (through fragments) names `fieldName`. */
export function selectsField(info: GraphQLResolveInfo, fieldName: string): boolean {
  const visited = new Set<string>();
  const search = (selectionSet: SelectionSetNode | undefined): boolean => {
    if (!selectionSet) return false;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value === fieldName) return true;
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if (search(selection.selectionSet)) return true;
      } else {
        const name = selection.name.value;
        if (visited.has(name)) continue;
        visited.add(name);
        if (search(info.fragments[name]?.selectionSet)) return true;
      }
    }
    return false;
  };
  return info.fieldNodes.some((node) => search(node.selectionSet));
}
