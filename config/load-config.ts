import fs from 'node:fs';
import path from 'node:path';
import * as v from 'valibot';
import { HookgateError } from '../kernel/errors.js';
import { ConfigSchema } from './schema.js';
import { withDefaults, type HookgateConfig } from './defaults.js';
import { parseYaml } from './parse-yaml.js';
import { realSandboxRoot, unsafeSandboxRoot } from './check-sandbox-root.js';

export const DEFAULT_CONFIG_FILE = 'hookgate.config.yaml';
export const ENV_PREFIX = 'HOOKGATE_';
/** `HOOKGATE_*` variables that switch tool behaviour and are not config keys. */
export const NON_CONFIG_ENV = new Set(['HOOKGATE_DEBUG']);

/** Where `loadConfig` reads from: a file, a working folder, an environment. */
export interface LoadConfigOptions {
  /** Explicit file (`--config`); it must exist. */
  file?: string;
  /** Folder searched for hookgate.config.yaml when no file is given; default cwd. */
  cwd?: string;
  /** Environment to read HOOKGATE_* overrides from; default process.env. */
  env?: NodeJS.ProcessEnv;
}

/**
 * Reads the config file (if any), applies `HOOKGATE_*` overrides, validates,
 * and fills defaults. With no file at all, everything runs on embedded
 * defaults. Throws CONFIG_UNREADABLE or CONFIG_INVALID with the source, the key
 * path and what was expected.
 */
export function loadConfig(options: LoadConfigOptions = {}): HookgateConfig {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  let source = '(defaults)';
  let raw: Record<string, unknown> = {};
  let baseDir = cwd;

  const file = options.file ? path.resolve(cwd, options.file) : path.join(cwd, DEFAULT_CONFIG_FILE);
  if (options.file || fs.existsSync(file)) {
    source = options.file ?? DEFAULT_CONFIG_FILE;
    baseDir = path.dirname(file);
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      throw new HookgateError('CONFIG_UNREADABLE', `${source}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? 'error'})`, { cause: err });
    }
    const parsed = parseYaml(text);
    if (!parsed.ok) throw new HookgateError('CONFIG_UNREADABLE', `${source}: ${parsed.message}`);
    const value = parsed.value;
    if (value !== null && value !== undefined) {
      if (typeof value !== 'object' || Array.isArray(value)) {
        throw new HookgateError('CONFIG_INVALID', `${source}: expected a mapping at the top level, got ${describe(value)}`);
      }
      raw = value as Record<string, unknown>;
    }
  }

  const fromEnv = new Map<string, string>();
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(ENV_PREFIX) || value === undefined || NON_CONFIG_ENV.has(name)) continue;
    const keyPath = envNameToPath(name);
    setPath(raw, keyPath, value);
    fromEnv.set(keyPath.join('.'), name);
  }

  const result = v.safeParse(ConfigSchema, raw);
  if (!result.success) {
    const lines = result.issues.map((issue) => {
      const dot = v.getDotPath(issue) ?? '(top level)';
      const where = fromEnv.get(dot) ?? source;
      return `${where}: ${dot}: ${issueText(issue)}`;
    });
    throw new HookgateError('CONFIG_INVALID', lines.join('\n'), { details: { source, problems: lines } });
  }
  const config = withDefaults(result.output, baseDir);
  config.source = { file: source, env: Object.fromEntries(fromEnv) };
  const unsafe = unsafeSandboxRoot(config);
  if (unsafe !== undefined) {
    const real = realSandboxRoot(config.sandbox.root);
    const root = `${JSON.stringify(config.sandbox.root)}${real === undefined ? '' : ` (really ${JSON.stringify(real)})`}`;
    const line = `${fromEnv.get('sandbox.root') ?? source}: sandbox.root: ${root} ${unsafe}. Give the sandbox a folder of its own, such as ./.hookgate/sandbox`;
    throw new HookgateError('CONFIG_INVALID', line, { details: { source, problems: [line] } });
  }
  return config;
}

/** `HOOKGATE_STORE__SQLITE__PATH` -> store.sqlite.path; single underscores become camelCase. */
export function envNameToPath(name: string): string[] {
  return name
    .slice(ENV_PREFIX.length)
    .split('__')
    .map((part) => part.toLowerCase().replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()));
}

function setPath(target: Record<string, unknown>, keyPath: string[], value: unknown): void {
  let node = target;
  for (const key of keyPath.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[keyPath[keyPath.length - 1]!] = value;
}

function issueText(issue: v.BaseIssue<unknown>): string {
  // An unknown key is a strict-object issue expecting `never`; a strict-object
  // issue expecting `Object` is a value that is not a mapping at all.
  if (issue.type === 'strict_object' && issue.expected === 'never') return 'unknown key';
  const got = `got ${describe(issue.input)}`;
  // Our own messages (schema.ts) already say what was expected.
  if (issue.message.startsWith('expected ')) return `${issue.message}, ${got}`;
  if (issue.type === 'picklist' && issue.expected) return `expected one of ${issue.expected.replace(/^\((.*)\)$/, '$1').split(' | ').join(', ')}, ${got}`;
  if (issue.expected) return `expected ${EXPECTED_NAMES[issue.expected] ?? issue.expected}, ${got}`;
  return issue.message;
}

const EXPECTED_NAMES: Record<string, string> = { Object: 'a mapping', Array: 'a list' };

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return String(value);
}
