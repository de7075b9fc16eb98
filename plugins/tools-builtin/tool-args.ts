import { invalidArgument } from './tool-errors.js';

/**
 * Checks a tool's arguments against the few shapes the builtin tools use and
 * reads them with their types. Each failure is an immediate, synchronous
 * `HookgateError` that names the tool and the argument, so the model can
 * correct its call.
 */
export class ToolArgs {
  constructor(
    private readonly tool: string,
    private readonly args: Record<string, unknown>,
    allowed: readonly string[],
  ) {
    if (args === null || typeof args !== 'object' || Array.isArray(args)) {
      throw invalidArgument(tool, `arguments must be an object, got ${describe(args)}`);
    }
    for (const key of Object.keys(args)) {
      if (!allowed.includes(key)) {
        const expected = allowed.length === 0 ? 'it takes no arguments' : `expected ${allowed.map((a) => `"${a}"`).join(', ')}`;
        throw invalidArgument(tool, `unknown argument "${key}"; ${expected}`, key);
      }
    }
  }

  /** A required, non-empty string. */
  requiredString(name: string): string {
    const value = this.args[name];
    if (value === undefined || value === null) throw invalidArgument(this.tool, `argument "${name}" is required (a string)`, name);
    if (typeof value !== 'string') throw invalidArgument(this.tool, `argument "${name}" must be a string, got ${describe(value)}`, name);
    if (value.length === 0) throw invalidArgument(this.tool, `argument "${name}" must not be empty`, name);
    return value;
  }

  /** A string that may be empty (file contents). */
  requiredText(name: string): string {
    const value = this.args[name];
    if (value === undefined || value === null) throw invalidArgument(this.tool, `argument "${name}" is required (a string)`, name);
    if (typeof value !== 'string') throw invalidArgument(this.tool, `argument "${name}" must be a string, got ${describe(value)}`, name);
    return value;
  }

  optionalString(name: string): string | undefined {
    const value = this.args[name];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string') throw invalidArgument(this.tool, `argument "${name}" must be a string, got ${describe(value)}`, name);
    return value;
  }

  optionalEnum<T extends string>(name: string, values: readonly T[]): T | undefined {
    const value = this.optionalString(name);
    if (value === undefined) return undefined;
    if (!(values as readonly string[]).includes(value)) {
      throw invalidArgument(this.tool, `argument "${name}" must be one of ${values.map((v) => `"${v}"`).join(', ')}, got "${value}"`, name);
    }
    return value as T;
  }

  optionalBoolean(name: string): boolean | undefined {
    const value = this.args[name];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'boolean') throw invalidArgument(this.tool, `argument "${name}" must be a boolean, got ${describe(value)}`, name);
    return value;
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return typeof value;
}
