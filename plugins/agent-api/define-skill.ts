import { SkillDefinitionValidationError, type DefinitionIssue } from './agent-errors.js';

/**
 * An inline skill (document 001 "SkillDefinition"): the equivalent of a
 * skill directory, `instructions` its SKILL.md body and `files` its
 * supporting resources keyed by path relative to the skill root.
 */
export interface SkillDefinition {
  /** Lowercase ASCII letters, digits and single hyphens; at most 64 characters. */
  readonly name: string;
  /** The catalog line: what the skill does and when to use it; at most 1024 characters. */
  readonly description: string;
  /** The skill's content, loaded on activation; non-empty. */
  readonly instructions: string;
  readonly license?: string;
  /** At most 500 characters. */
  readonly compatibility?: string;
  /** A string-to-string map recorded in the packaged frontmatter. */
  readonly metadata?: Readonly<Record<string, string>>;
  /** Space-separated pre-approved tools (recorded only: every call still passes the gate). */
  readonly allowedTools?: string;
  /** Supporting resources by safe relative path; content a string or bytes. */
  readonly files?: Readonly<Record<string, string | Uint8Array>>;
}

export const SKILL_NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const MAX_NAME = 64;
const MAX_DESCRIPTION = 1024;
const MAX_COMPATIBILITY = 500;
const MAX_PATH = 1024;
const FIELDS = new Set(['name', 'description', 'instructions', 'license', 'compatibility', 'metadata', 'allowedTools', 'files']);
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const defined = new WeakSet<object>();

/**
 * Validates an inline skill and returns it frozen (a copy: later changes to
 * the caller's object, its `metadata`, `files` or byte arrays change
 * nothing). Synchronous, at module load; `SkillDefinitionValidationError`
 * with every field-level issue at once. A value `defineSkill` returned is
 * returned as it is.
 */
export function defineSkill(definition: SkillDefinition): SkillDefinition {
  if (definition !== null && typeof definition === 'object' && defined.has(definition)) return definition;
  if (definition === null || typeof definition !== 'object' || Array.isArray(definition)) {
    throw new SkillDefinitionValidationError(undefined, [{ field: '(definition)', message: `expected { name, description, instructions, files? }, got ${describe(definition)}` }]);
  }
  const raw = definition as unknown as Record<string, unknown>;
  const issues: DefinitionIssue[] = [];
  for (const key of Object.keys(raw)) if (!FIELDS.has(key)) issues.push({ field: quoteName(key), message: 'is not a field of a skill definition' });
  const { name, description, instructions, license, compatibility, metadata, allowedTools, files } = raw;
  if (typeof name !== 'string') issues.push({ field: 'name', message: `must be a string, got ${describe(name)}` });
  else if (name.length === 0 || name.length > MAX_NAME || !SKILL_NAME_PATTERN.test(name)) {
    issues.push({ field: 'name', message: `must be 1-${MAX_NAME} lowercase ASCII letters, digits and single hyphens (no leading, trailing or double hyphen); got ${quoteName(name)}` });
  }
  text(issues, 'description', description, { required: true, max: MAX_DESCRIPTION });
  text(issues, 'instructions', instructions, { required: true });
  text(issues, 'license', license, {});
  text(issues, 'compatibility', compatibility, { max: MAX_COMPATIBILITY });
  text(issues, 'allowedTools', allowedTools, {});
  const metadataCopy = metadata === undefined ? undefined : stringMap(issues, metadata);
  const filesCopy = files === undefined ? undefined : fileMap(issues, files);
  if (issues.length > 0) throw new SkillDefinitionValidationError(typeof name === 'string' ? quoteName(name) : undefined, issues);
  const skill: SkillDefinition = Object.freeze({
    name: name as string,
    description: description as string,
    instructions: instructions as string,
    ...(license !== undefined ? { license: license as string } : {}),
    ...(compatibility !== undefined ? { compatibility: compatibility as string } : {}),
    ...(metadataCopy !== undefined ? { metadata: metadataCopy } : {}),
    ...(allowedTools !== undefined ? { allowedTools: allowedTools as string } : {}),
    ...(filesCopy !== undefined ? { files: filesCopy } : {}),
  });
  defined.add(skill);
  return skill;
}

/**
 * Why `path` is not a safe relative path for a skill resource, or undefined
 * when it is. Refused: empty or over 1024 characters; a leading `/`; a
 * backslash; a `:` (drive letters `C:`, Windows alternate streams
 * `a.txt:x`); NUL or any other control character; a lone surrogate; an
 * empty segment (`a//b`, a trailing `/`); a `.` or `..` segment; a segment
 * of only dots and spaces (`...`, `. `, which Windows resolves to `.`/`..`);
 * and `SKILL.md` itself in any letter case (the packaged skill's own file).
 */
export function skillPathProblem(path: string): string | undefined {
  if (path.length === 0) return 'is empty';
  if (path.length > MAX_PATH) return `is longer than ${MAX_PATH} characters`;
  if (path.startsWith('/')) return 'is absolute (starts with "/"); paths are relative to the skill root';
  if (path.includes('\\')) return 'contains a backslash; separate segments with "/"';
  if (path.includes(':')) return 'contains ":" (a drive letter or an alternate data stream)';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(path)) return 'contains NUL or another control character';
  if (LONE_SURROGATE.test(path)) return 'contains a lone surrogate (not valid Unicode)';
  const segments = path.split('/');
  if (segments.some((s) => s === '')) return 'has an empty segment ("//" or a trailing "/")';
  if (segments.some((s) => s === '.' || s === '..')) return 'has a "." or ".." segment';
  if (segments.some((s) => /^[. ]+$/.test(s))) return 'has a segment of only dots and spaces';
  if (path.toLowerCase() === 'skill.md') return 'is SKILL.md, which the skill packages from its instructions';
  return undefined;
}

function fileMap(issues: DefinitionIssue[], files: unknown): Readonly<Record<string, string | Uint8Array>> | undefined {
  if (!isPlainObject(files)) {
    issues.push({ field: 'files', message: `must be a plain object of path → content, got ${describe(files)}` });
    return undefined;
  }
  const copy: Record<string, string | Uint8Array> = {};
  const folded = new Map<string, string>();
  const paths = Object.keys(files);
  for (const path of paths) {
    const field = `files[${quoteName(path)}]`;
    const problem = skillPathProblem(path);
    if (problem !== undefined) {
      issues.push({ field, message: `path ${problem}` });
      continue;
    }
    const key = path.normalize('NFC').toLowerCase();
    const other = folded.get(key);
    if (other !== undefined) {
      issues.push({ field, message: `collides with ${quoteName(other)} on a case-insensitive or Unicode-normalizing file system` });
      continue;
    }
    folded.set(key, path);
    const content = (files as Record<string, unknown>)[path];
    if (typeof content === 'string') copy[path] = content;
    else if (content instanceof Uint8Array) copy[path] = new Uint8Array(content);
    else issues.push({ field, message: `content must be a string or a Uint8Array, got ${describe(content)}` });
  }
  // A path that is both a file and a folder (`a` and `a/b`) cannot be written as a directory.
  for (const path of paths) {
    const key = path.normalize('NFC').toLowerCase();
    for (const [otherKey, other] of folded) {
      if (otherKey.startsWith(`${key}/`)) issues.push({ field: `files[${quoteName(path)}]`, message: `is a file and also the folder of ${quoteName(other)}` });
    }
  }
  return Object.freeze(copy);
}

function stringMap(issues: DefinitionIssue[], map: unknown): Readonly<Record<string, string>> | undefined {
  if (!isPlainObject(map)) {
    issues.push({ field: 'metadata', message: `must be a plain object of string → string, got ${describe(map)}` });
    return undefined;
  }
  const copy: Record<string, string> = {};
  for (const [key, value] of Object.entries(map)) {
    if (key === '') issues.push({ field: 'metadata', message: 'has an empty key' });
    else if (typeof value !== 'string') issues.push({ field: `metadata[${quoteName(key)}]`, message: `must be a string, got ${describe(value)}` });
    else copy[key] = value;
  }
  return Object.freeze(copy);
}

function text(issues: DefinitionIssue[], field: string, value: unknown, rules: { required?: boolean; max?: number }): void {
  if (value === undefined) {
    if (rules.required) issues.push({ field, message: 'is required' });
    return;
  }
  if (typeof value !== 'string') issues.push({ field, message: `must be a string, got ${describe(value)}` });
  else if (rules.required && value.trim() === '') issues.push({ field, message: field === 'instructions' ? 'must not be empty: a skill is its content' : 'must not be empty' });
  else if (rules.max !== undefined && value.length > rules.max) issues.push({ field, message: `must be at most ${rules.max} characters (got ${value.length})` });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** A name as messages show it: JSON-quoted (control characters escaped), cut to 80 characters. */
export function quoteName(name: string): string {
  const quoted = JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name);
  return quoted;
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Map) return 'a Map';
  return typeof value;
}
