import { createHash } from 'node:crypto';
import { HookgateError } from './errors.js';
import { isMcpIdentifier, splitMcpToolName } from './mcp-tool-name.js';
import type { ToolSpec } from './model.js';

/**
 * What tool-calling APIs accept as a tool (function) name: OpenAI Chat Completions and Anthropic Messages both
 * take `^[a-zA-Z0-9_-]{1,64}$`. Model providers share the mapping below, so one tool has one name everywhere.
 */
export const FUNCTION_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

const SEPARATOR = '__';
const HASHED_PREFIX_LENGTH = 55;

export interface ToolRef {
  identifier: string;
  apiName: string;
}

/**
 * The function name a model API sees for a hookgate tool: `identifier__apiName` when that
 * is already a valid name and the identifier holds no `__` (so the first `__`
 * splits it back unambiguously) or is an MCP server's `mcp__<server>` (its
 * tools are `mcp__<server>__<tool>`, document 001's name, split after the
 * server: kernel/mcp-tool-name.ts). Otherwise the name is sanitized, cut to 55
 * characters and given an 8-hex suffix hashed from the original pair, so
 * different tools still get different names. Pure and deterministic: the same
 * tool always gets the same name, in offered tools and in replayed history.
 */
export function toFunctionName(identifier: string, apiName: string): string {
  const plain = `${identifier}${SEPARATOR}${apiName}`;
  const splittable = isMcpIdentifier(identifier) || !identifier.includes(SEPARATOR);
  if (splittable && identifier !== '' && apiName !== '' && FUNCTION_NAME_PATTERN.test(plain)) return plain;
  const hash = createHash('sha256').update(`${identifier}\0${apiName}`).digest('hex').slice(0, 8);
  const cleaned = plain.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, HASHED_PREFIX_LENGTH);
  return `${cleaned}_${hash}`;
}

/**
 * Maps function names back to hookgate tools for one request. Names of offered
 * tools resolve exactly; a name the model invented splits at the first `__` (an
 * MCP name `mcp__<server>__<tool>` at the first `__` after the server)
 * (or becomes `{ identifier: '', apiName: name }`), so the runtime can report
 * the unknown tool by the name the model used.
 */
export class ToolNameMap {
  private readonly byName = new Map<string, ToolRef>();

  /** Throws MODEL_FAILED when two offered tools would share one function name. */
  constructor(tools: readonly ToolSpec[]) {
    for (const tool of tools) {
      const name = toFunctionName(tool.identifier, tool.apiName);
      const taken = this.byName.get(name);
      if (taken && (taken.identifier !== tool.identifier || taken.apiName !== tool.apiName)) {
        throw new HookgateError(
          'MODEL_FAILED',
          `tools ${taken.identifier}/${taken.apiName} and ${tool.identifier}/${tool.apiName} map to the same model function name "${name}"`,
          { details: { functionName: name } },
        );
      }
      this.byName.set(name, { identifier: tool.identifier, apiName: tool.apiName });
    }
  }

  toName(ref: ToolRef): string {
    return toFunctionName(ref.identifier, ref.apiName);
  }

  fromName(name: string): ToolRef {
    const known = this.byName.get(name);
    if (known) return { ...known };
    const mcp = splitMcpToolName(name);
    if (mcp) return mcp;
    const at = name.indexOf(SEPARATOR);
    if (at <= 0) return { identifier: '', apiName: name };
    return { identifier: name.slice(0, at), apiName: name.slice(at + SEPARATOR.length) };
  }
}
