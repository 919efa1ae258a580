/**
 * JSON Schemas of a tool from its GraphQL operation: the input schema from the operation's variables
 * (input objects, enums, lists and scalars as JSON Schema 2020-12, the MCP default dialect), the output
 * schema from the selection of its result field. Built once when the gateway starts, from the schema
 * Yoga serves, so a tool can never describe a field the API does not have (an unknown field throws).
 */
import {
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLOutputType,
  type GraphQLSchema,
  getNamedType,
  isAbstractType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  parse,
  type SelectionSetNode,
  typeFromAST,
  validate,
} from 'graphql';

/** A JSON Schema object. */
type JsonSchema = Record<string, unknown>;

function scalarSchema(name: string): JsonSchema {
  switch (name) {
    case 'Int':
      return { type: 'integer' };
    case 'Float':
      return { type: 'number' };
    case 'Boolean':
      return { type: 'boolean' };
    case 'JSON':
      return {};
    default:
      return { type: 'string' }; // String, ID, DateTime and the other string-encoded scalars
  }
}

function nullable(schema: JsonSchema): JsonSchema {
  return typeof schema.type === 'string' ? { ...schema, type: [schema.type, 'null'] } : schema;
}

function inputSchema(type: GraphQLInputType, description?: string | null): JsonSchema {
  const inner = isNonNullType(type) ? type.ofType : type;
  let schema: JsonSchema;
  if (isListType(inner)) schema = { type: 'array', items: inputSchema(inner.ofType) };
  else if (isEnumType(inner)) schema = { type: 'string', enum: inner.getValues().map((value) => value.name) };
  else if (isInputObjectType(inner)) {
    const fields = Object.values(inner.getFields());
    schema = {
      type: 'object',
      properties: Object.fromEntries(
        fields.map((field) => [field.name, inputSchema(field.type, field.description)]),
      ),
      required: fields.filter((field) => isNonNullType(field.type)).map((field) => field.name),
      additionalProperties: false,
    };
  } else schema = scalarSchema(inner.name);
  if (description) schema.description = description;
  return isNonNullType(type) ? schema : nullable(schema);
}

/** The input schema of an operation: one property per variable, the non-null ones required. */
function variablesSchema(schema: GraphQLSchema, operation: OperationDefinitionNode): ObjectSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const definition of operation.variableDefinitions ?? []) {
    const type = typeFromAST(schema, definition.type) as GraphQLInputType | undefined;
    if (!type) throw new Error(`Unknown variable type in ${operation.name?.value}`);
    const name = definition.variable.name.value;
    properties[name] = inputSchema(type);
    if (isNonNullType(type) && !definition.defaultValue) required.push(name);
  }
  return { type: 'object', properties, required, additionalProperties: false };
}

/** The schema of a selection on `type`: fragments on abstract types merge their fields (none required). */
function selectionSchema(
  type: GraphQLNamedType,
  selectionSet: SelectionSetNode,
  schema: GraphQLSchema,
): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const visit = (on: GraphQLNamedType, set: SelectionSetNode, certain: boolean) => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        const target = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : on;
        if (!target) throw new Error('Unknown fragment type');
        visit(target, selection.selectionSet, certain && target === on);
        continue;
      }
      if (selection.kind !== Kind.FIELD) throw new Error('Named fragments are not supported in tools');
      const name = selection.name.value;
      if (name === '__typename') {
        properties[name] = { type: 'string' };
        if (certain) required.push(name);
        continue;
      }
      if (!isObjectType(on) && !isAbstractType(on) && !('getFields' in on))
        throw new Error(`No fields on ${on}`);
      const field = (on as { getFields(): Record<string, { type: GraphQLOutputType }> }).getFields()[name];
      if (!field) throw new Error(`Unknown field ${on.name}.${name}`);
      properties[selection.alias?.value ?? name] = outputSchema(field.type, selection.selectionSet, schema);
      if (certain) required.push(selection.alias?.value ?? name);
    }
  };
  visit(type, selectionSet, !isAbstractType(type));
  return { type: 'object', properties, required: [...new Set(required)] };
}

function outputSchema(
  type: GraphQLOutputType,
  set: SelectionSetNode | undefined,
  schema: GraphQLSchema,
): JsonSchema {
  const inner = isNonNullType(type) ? type.ofType : type;
  let result: JsonSchema;
  if (isListType(inner)) result = { type: 'array', items: outputSchema(inner.ofType, set, schema) };
  else if (isEnumType(inner)) result = { type: 'string' };
  else if (set) result = selectionSchema(getNamedType(inner), set, schema);
  else result = scalarSchema(getNamedType(inner).name);
  return isNonNullType(type) ? result : nullable(result);
}

/** A tool's operation, checked against the schema, with its input and output schemas. */
export interface CompiledOperation {
  operationName: string;
  inputSchema: ObjectSchema;
  outputSchema: ObjectSchema;
}

/** A JSON Schema of an object (what MCP requires of a tool's schemas). */
type ObjectSchema = JsonSchema & { type: 'object' };

/**
 * Parses and validates `document` against `schema` and derives its schemas; `resultPath` is the root
 * field whose value is the result (`structuredContent` is `{ [resultPath]: value }`).
 * @throws Error when the document is not one valid named operation selecting `resultPath`
 */
export function compileOperation(
  schema: GraphQLSchema,
  document: string,
  resultPath: string,
): CompiledOperation {
  const ast = parse(document);
  const errors = validate(schema, ast);
  if (errors.length)
    throw new Error(`Invalid tool operation: ${errors.map((error) => error.message).join('; ')}`);
  const [operation] = ast.definitions;
  if (ast.definitions.length !== 1 || operation?.kind !== Kind.OPERATION_DEFINITION || !operation.name)
    throw new Error('A tool is one named operation');
  const root = schema.getRootType(operation.operation);
  if (!root) throw new Error(`No ${operation.operation} type`);
  const output = selectionSchema(root, operation.selectionSet, schema);
  const properties = output.properties as Record<string, JsonSchema>;
  if (!properties[resultPath]) throw new Error(`The operation does not select ${resultPath}`);
  return {
    operationName: operation.name.value,
    inputSchema: variablesSchema(schema, operation),
    outputSchema: {
      type: 'object',
      properties: { [resultPath]: properties[resultPath] },
      required: [resultPath],
    },
  };
}
