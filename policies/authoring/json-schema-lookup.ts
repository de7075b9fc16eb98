/**
 * Reading a tool's input schema (JSON Schema, as `ToolSpec.parameters`) the
 * way the authoring checks need: which properties an object has, which JSON
 * types and constant values a value can take. Anything this reader does not
 * understand (`$ref`, `not`, `if`) counts as "could be anything", so a check
 * built on it warns only about what the schema really rules out.
 */
export type JsonSchema = Record<string, unknown> | boolean;
export type JsonType = 'string' | 'number' | 'boolean' | 'object' | 'array' | 'null';

/** A property lookup: found (with its schema), missing (the schema names its properties and this is not one), or open. */
export type PropertyLookup = { kind: 'found'; schema: JsonSchema } | { kind: 'missing'; known: string[] } | { kind: 'open' };

const COMBINATORS = ['anyOf', 'oneOf', 'allOf'] as const;

function alternatives(schema: Record<string, unknown>): JsonSchema[] | undefined {
  for (const key of COMBINATORS) {
    const list = schema[key];
    if (Array.isArray(list) && list.length > 0) return list as JsonSchema[];
  }
  return undefined;
}

/**
 * Looks `name` up in an object schema. A schema that declares `properties`
 * (or `additionalProperties: false`) and neither lists `name`, matches it by
 * `patternProperties` nor allows other properties with a schema or `true`
 * makes it missing: a policy that reads it reads `undefined`.
 */
export function lookupProperty(schema: JsonSchema, name: string): PropertyLookup {
  if (typeof schema === 'boolean') return schema ? { kind: 'open' } : { kind: 'missing', known: [] };
  if (schema.$ref !== undefined) return { kind: 'open' };
  const alts = alternatives(schema);
  if (alts) {
    const found: JsonSchema[] = [];
    const known = new Set<string>();
    for (const alt of alts) {
      const r = lookupProperty(alt, name);
      if (r.kind === 'open') return r;
      if (r.kind === 'found') found.push(r.schema);
      else r.known.forEach((k) => known.add(k));
    }
    if (found.length === 0) return { kind: 'missing', known: [...known] };
    return { kind: 'found', schema: found.length === 1 ? found[0]! : { anyOf: found } };
  }
  const types = typesOf(schema);
  if (types && !types.has('object')) return { kind: 'missing', known: [] };
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (properties && Object.hasOwn(properties, name)) return { kind: 'found', schema: properties[name]! };
  const patterns = schema.patternProperties as Record<string, JsonSchema> | undefined;
  for (const [pattern, sub] of Object.entries(patterns ?? {})) {
    try {
      if (new RegExp(pattern, 'u').test(name)) return { kind: 'found', schema: sub };
    } catch {
      return { kind: 'open' };
    }
  }
  const additional = schema.additionalProperties;
  if (additional === true || (additional !== null && typeof additional === 'object')) {
    return additional === true ? { kind: 'open' } : { kind: 'found', schema: additional as JsonSchema };
  }
  if (additional === false || properties !== undefined) return { kind: 'missing', known: Object.keys(properties ?? {}) };
  return { kind: 'open' };
}

/** Every property schema an object schema declares (what `*` reaches), or undefined when it is open. */
export function allProperties(schema: JsonSchema): JsonSchema[] | undefined {
  if (typeof schema === 'boolean') return schema ? undefined : [];
  const alts = alternatives(schema);
  if (alts) {
    const out: JsonSchema[] = [];
    for (const alt of alts) {
      const props = allProperties(alt);
      if (props === undefined) return undefined;
      out.push(...props);
    }
    return out;
  }
  if (schema.$ref !== undefined || schema.patternProperties !== undefined) return undefined;
  const additional = schema.additionalProperties;
  if (additional === true || (additional !== null && typeof additional === 'object')) return undefined;
  if (additional !== false && schema.properties === undefined) return undefined;
  return Object.values((schema.properties as Record<string, JsonSchema> | undefined) ?? {});
}

/** The JSON types a value of this schema can have; undefined when the schema does not say. */
export function typesOf(schema: JsonSchema): Set<JsonType> | undefined {
  if (typeof schema === 'boolean') return schema ? undefined : new Set();
  const alts = alternatives(schema);
  if (alts && schema.type === undefined) {
    const out = new Set<JsonType>();
    for (const alt of alts) {
      const t = typesOf(alt);
      if (t === undefined) return undefined;
      t.forEach((x) => out.add(x));
    }
    return out;
  }
  const consts = constsOf(schema);
  if (consts) return new Set(consts.map(jsonTypeOf));
  const type = schema.type;
  const list = typeof type === 'string' ? [type] : Array.isArray(type) ? type : undefined;
  if (list === undefined) return undefined;
  return new Set(list.map((t) => (t === 'integer' ? 'number' : t)) as JsonType[]);
}

/** The only values a schema allows (`const`, `enum`), when it limits them. */
export function constsOf(schema: JsonSchema): unknown[] | undefined {
  if (typeof schema === 'boolean') return undefined;
  if (Object.hasOwn(schema, 'const')) return [schema.const];
  if (Array.isArray(schema.enum)) return schema.enum;
  const alts = alternatives(schema);
  if (alts && schema.type === undefined) {
    const out: unknown[] = [];
    for (const alt of alts) {
      const c = constsOf(alt);
      if (c === undefined) return undefined;
      out.push(...c);
    }
    return out;
  }
  return undefined;
}

/** The schema of an array's items; undefined when it does not say. */
export function itemsOf(schema: JsonSchema): JsonSchema | undefined {
  if (typeof schema === 'boolean') return undefined;
  const items = schema.items;
  if (items !== null && typeof items === 'object' && !Array.isArray(items)) return items as JsonSchema;
  if (typeof items === 'boolean') return items;
  return undefined;
}

export function jsonTypeOf(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  const t = typeof value;
  return t === 'string' || t === 'number' || t === 'boolean' ? t : 'object';
}
