import type * as v from 'valibot';

/**
 * The JSON Schema of a valibot schema, for the model's tool catalogue and
 * the gate's argument check. A minimal conversion (@valibot/to-json-schema
 * is not a dependency): objects (plain, strict, loose), string, number,
 * boolean, null, array, optional / nullable / nullish, picklist, literal,
 * union, and from pipes `description`, `integer`, `min_value` / `max_value`,
 * `min_length` / `max_length`, `regex`. Any other schema throws naming
 * where it is (`path`): a tool the model cannot be told about is refused at
 * definition. Synchronous, pure.
 */
export function toJsonSchema(schema: v.GenericSchema, path = 'input'): Record<string, unknown> {
  const s = schema as unknown as SchemaNode;
  const out = base(s, path);
  for (const action of s.pipe?.slice(1) ?? []) applyAction(out, action);
  return out;
}

interface SchemaNode {
  readonly type: string;
  readonly kind?: string;
  readonly entries?: Record<string, SchemaNode>;
  readonly item?: SchemaNode;
  readonly wrapped?: SchemaNode;
  readonly options?: readonly unknown[];
  readonly literal?: unknown;
  readonly rest?: SchemaNode;
  readonly pipe?: readonly (SchemaNode & { requirement?: unknown; description?: string })[];
}

function base(s: SchemaNode, path: string): Record<string, unknown> {
  switch (s.type) {
    case 'object':
    case 'strict_object':
    case 'loose_object': {
      const properties: Record<string, unknown> = {};
      const required: string[] = [];
      for (const [key, entry] of Object.entries(s.entries ?? {})) {
        properties[key] = toJsonSchema(entry as never, `${path}.${key}`);
        if (!isOptional(entry)) required.push(key);
      }
      return {
        type: 'object',
        properties,
        ...(required.length > 0 ? { required } : {}),
        ...(s.type === 'strict_object' ? { additionalProperties: false } : {}),
      };
    }
    case 'string':
    case 'number':
    case 'boolean':
    case 'null':
      return { type: s.type };
    case 'array':
      return { type: 'array', items: toJsonSchema(s.item as never, `${path}[]`) };
    case 'optional':
    case 'exact_optional':
      return toJsonSchema(s.wrapped as never, path);
    case 'nullable':
    case 'nullish':
      return { anyOf: [toJsonSchema(s.wrapped as never, path), { type: 'null' }] };
    case 'picklist':
      return { enum: [...(s.options ?? [])] };
    case 'literal':
      return { const: s.literal };
    case 'union':
      return { anyOf: (s.options as SchemaNode[]).map((o, i) => toJsonSchema(o as never, `${path}|${i}`)) };
    default:
      throw new Error(`${path}: a valibot "${s.type}" schema cannot be described to the model as JSON Schema (supported: object, string, number, boolean, null, array, optional, nullable, picklist, literal, union)`);
  }
}

function isOptional(entry: SchemaNode): boolean {
  return entry.type === 'optional' || entry.type === 'exact_optional' || entry.type === 'nullish';
}

function applyAction(out: Record<string, unknown>, action: SchemaNode & { requirement?: unknown; description?: string }): void {
  switch (action.type) {
    case 'description':
      out.description = action.description;
      return;
    case 'integer':
      out.type = 'integer';
      return;
    case 'min_value':
      out.minimum = action.requirement;
      return;
    case 'max_value':
      out.maximum = action.requirement;
      return;
    case 'min_length':
      out[out.type === 'array' ? 'minItems' : 'minLength'] = action.requirement;
      return;
    case 'max_length':
      out[out.type === 'array' ? 'maxItems' : 'maxLength'] = action.requirement;
      return;
    case 'regex':
      if (action.requirement instanceof RegExp) out.pattern = action.requirement.source;
      return;
    default:
      // Other checks (transforms, custom checks) still run when the tool parses its arguments; the model is not told.
      return;
  }
}
