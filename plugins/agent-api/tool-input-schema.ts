import { toJsonSchema as valibotToJsonSchema, type ConversionConfig } from '@valibot/to-json-schema';
import type * as v from 'valibot';

const CONVERSION: ConversionConfig = { target: 'draft-07', typeMode: 'ignore', errorMode: 'throw' };

/**
 * The JSON Schema (draft-07) of a tool's valibot input schema, for the
 * model's tool catalogue and the gate's argument check, by
 * `@valibot/to-json-schema` (the conversion document 001's reference uses).
 * A transformation in a pipe (`v.transform`, `v.trim`, `v.toLowerCase`, ...)
 * is refused like anything JSON Schema cannot say (`typeMode: 'ignore'`): the
 * gate, policies and webhooks check the arguments the model sent, so `run`
 * must get those values, not others made from them. A schema or check that JSON
 * Schema cannot say throws naming where it is (`input.when: The "date"
 * schema cannot be converted...`), so a tool the model could not be told
 * about is refused at definition. Synchronous, pure. The `$schema` key is
 * left out: providers get the bare schema.
 */
export function toJsonSchema(schema: v.GenericSchema): Record<string, unknown> {
  try {
    const { $schema: _dialect, ...rest } = valibotToJsonSchema(schema, CONVERSION) as Record<string, unknown>;
    return rest;
  } catch (err) {
    throw new Error(`${failingPath(schema, 'input')}: ${(err as Error).message}`);
  }
}

type Node = { type?: string; entries?: Record<string, Node>; item?: Node; wrapped?: Node; options?: unknown[] };

/** The deepest part of `schema` that still fails to convert (object entries, array items, wrapped schemas). */
function failingPath(schema: unknown, path: string): string {
  const node = schema as Node;
  const children: Array<[string, unknown]> = [
    ...Object.entries(node.entries ?? {}).map(([k, s]): [string, unknown] => [`${path}.${k}`, s]),
    ...(node.item ? [[`${path}[]`, node.item] as [string, unknown]] : []),
    ...(node.wrapped ? [[path, node.wrapped] as [string, unknown]] : []),
  ];
  for (const [childPath, child] of children) {
    try {
      valibotToJsonSchema(child as v.GenericSchema, CONVERSION);
    } catch {
      return failingPath(child, childPath);
    }
  }
  return path;
}
