import { HookgateError } from '../../kernel/errors.js';
import type { Logger } from '../../kernel/logger.js';
import type { ToolDefinition, ToolExecutionContext, ToolSource } from '../../kernel/tools.js';
import type { BuiltinTool, BuiltinToolOutput } from './builtin-tool.js';
import { BUILTIN_TOOL_SOURCE } from './builtin-tool.js';
import { createFsTools } from './fs-tools.js';
import type { SandboxFs } from './sandbox-path.js';
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

  constructor(options: BuiltinToolSourceOptions) {
    this.logger = options.logger;
    for (const t of [...createFsTools(options.sandbox, { readLimitBytes: options.readLimitBytes }), ...createTimeTools(options.now)]) {
      this.tools.set(toolKey(t.definition.identifier, t.definition.apiName), t);
    }
  }

  list(): ToolDefinition[] {
    return [...this.tools.values()].map((t) => structuredClone(t.definition));
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

function toolKey(identifier: string, apiName: string): string {
  return `${identifier}/${apiName}`;
}
