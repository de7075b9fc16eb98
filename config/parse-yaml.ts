import YAML from 'yaml';
import { describeYamlError } from './yaml-error.js';

/**
 * At most this many alias expansions (the yaml library's `maxAliasCount`,
 * which weighs each `*alias` by the aliases inside what it points to). A
 * "billion laughs" document, where nine aliases of nine aliases expand to
 * gigabytes, is refused long before it grows; ordinary reuse of an anchor
 * (`tools: *shared`) stays far below it.
 */
export const YAML_MAX_ALIAS_COUNT = 100;

export type ParsedYaml = { ok: true; value: unknown } | { ok: false; message: string };

/**
 * Parses one YAML document for every file hookgate reads (hookgate.config.yaml,
 * agent files, policy packs), with the alias limit above. Synchronous, never
 * throws: a syntax error or an alias bomb comes back as a one-line message
 * (`invalid YAML at line L, column C: ...`) for the caller to prefix with the
 * file name.
 */
export function parseYaml(text: string): ParsedYaml {
  let doc: YAML.Document.Parsed;
  try {
    doc = YAML.parseDocument(text);
  } catch (err) {
    return { ok: false, message: `invalid YAML: ${(err as Error).message}` };
  }
  if (doc.errors.length > 0) return { ok: false, message: describeYamlError(doc.errors[0]!) };
  try {
    return { ok: true, value: doc.toJS({ maxAliasCount: YAML_MAX_ALIAS_COUNT }) as unknown };
  } catch (err) {
    if (err instanceof ReferenceError && /excessive alias count/i.test(err.message)) {
      return { ok: false, message: `YAML aliases expand too much (more than ${YAML_MAX_ALIAS_COUNT} alias expansions): refused as a possible "billion laughs" document` };
    }
    return { ok: false, message: `invalid YAML: ${(err as Error).message}` };
  }
}
