import type { YAMLError } from 'yaml';

/**
 * One line for a YAML parse error: `line L, column C: what`. The yaml
 * package's own message repeats the position and ends with a source excerpt;
 * both are dropped so the file name, line and cause read as one sentence.
 */
export function describeYamlError(error: YAMLError): string {
  const pos = error.linePos?.[0];
  const what = error.message
    .split('\n')[0]!
    .replace(/\s*at line \d+, column \d+:?\s*$/, '')
    .trim();
  return pos ? `invalid YAML at line ${pos.line}, column ${pos.col}: ${what}` : `invalid YAML: ${what}`;
}
