import { HookgateError } from '../../kernel/errors.js';
import type { Logger } from '../../kernel/logger.js';
import path from 'node:path';
import type { CanonicalArg, CanonicalArgs, ToolDefinition, ToolExecutionContext, ToolSource } from '../../kernel/tools.js';
import type { BuiltinTool, BuiltinToolOutput } from './builtin-tool.js';
import { BUILTIN_TOOL_SOURCE } from './builtin-tool.js';
import { createFsTools } from './fs-tools.js';
import { relativeInside, type ResolveMode, type SandboxFs } from './sandbox-path.js';
import { createTimeTools } from './time-tools.js';

export interface BuiltinToolSourceOptions {
  sandbox: SandboxFs;
  logger: Logger;
  /** Clock for `time/now`; defaults to the system clock. */
  now?: () => Date;
  /** Cap for `fs/readFile`; defaults to 1 MiB. */
  readLimitBytes?: number;
}

/**
 * The `builtin` tool source: `fs/*` confined to the sandbox folder and
 * `time/now`. `execute` is async; it throws `TOOL_NOT_FOUND` for a tool it does
 * not have and the tool's own `HookgateError` otherwise (bad arguments,
 * `SANDBOX_ESCAPE`, file-system failures), which the runtime turns into an
 * error result the model sees.
 */
export class BuiltinToolSource implements ToolSource {
  readonly id = BUILTIN_TOOL_SOURCE;
  private readonly tools = new Map<string, BuiltinTool>();
  private readonly logger: Logger;
  private readonly sandbox: SandboxFs;

  constructor(options: BuiltinToolSourceOptions) {
    this.logger = options.logger;
    this.sandbox = options.sandbox;
    for (const t of [...createFsTools(options.sandbox, { readLimitBytes: options.readLimitBytes }), ...createTimeTools(options.now)]) {
      this.tools.set(toolKey(t.definition.identifier, t.definition.apiName), t);
    }
  }

  list(): ToolDefinition[] {
    return [...this.tools.values()].map((t) => structuredClone(t.definition));
  }

  /**
   * The sandbox paths of an `fs` call as `execute` will resolve them: for each
   * path argument `{ kind: 'path', raw, path, absolute }` where `path` is
   * relative to the sandbox root (`/`-separated, `.` for the root) and
   * `absolute` the host path, both with symlinks resolved (for `deletePath`
   * the final link itself, which is what it deletes). A path the sandbox
   * refuses (outside it, through a symlink too) or cannot resolve gets only
   * `raw`: the tool refuses it anyway. Async (file-system lookups, no
   * writes beyond creating a missing sandbox root); never throws for bad
   * arguments; `{}` for tools without path arguments.
   */
  async canonicalArgs(call: { identifier: string; apiName: string; args: Readonly<Record<string, unknown>> }): Promise<CanonicalArgs> {
    const tool = this.tools.get(toolKey(call.identifier, call.apiName));
    if (!tool?.pathArgs) return {};
    const out: Record<string, CanonicalArg> = {};
    for (const arg of tool.pathArgs) {
      const raw = call.args?.[arg.name];
      const used = (raw === undefined || raw === null || raw === '') && arg.default !== undefined ? arg.default : raw;
      out[arg.name] = typeof used === 'string' ? await resolvedPath(this.sandbox, raw, used, arg.mode) : { kind: 'path', raw };
    }
    return out;
  }

  async execute(
    call: { identifier: string; apiName: string; args: Record<string, unknown> },
    ctx: ToolExecutionContext,
  ): Promise<BuiltinToolOutput> {
    const name = toolKey(call.identifier, call.apiName);
    const tool = this.tools.get(name);
    if (!tool) throw new HookgateError('TOOL_NOT_FOUND', `the builtin tool source has no tool "${name}"`, { details: { tool: name } });
    try {
      return await tool.run(call.args ?? {}, ctx);
    } catch (err) {
      // Arguments are not logged: file contents may be sensitive.
      this.logger.debug('builtin tool failed', { tool: name, operationId: ctx.operationId, error: err });
      throw err;
    }
  }
}

async function resolvedPath(sandbox: SandboxFs, raw: unknown, used: string, mode: ResolveMode): Promise<CanonicalArg> {
  try {
    const target = await sandbox.resolve(used, mode);
    const rel = relativeInside(await sandbox.ensureRoot(), target.real);
    if (rel === undefined) return { kind: 'path', raw };
    return { kind: 'path', raw, path: rel === '' ? '.' : rel.split(path.sep).join('/'), absolute: target.real };
  } catch (err) {
    // SANDBOX_ESCAPE or a path the file system cannot resolve (ELOOP...): execute refuses it the same way.
    if (err instanceof HookgateError) return { kind: 'path', raw };
    throw err;
  }
}

function toolKey(identifier: string, apiName: string): string {
  return `${identifier}/${apiName}`;
}
