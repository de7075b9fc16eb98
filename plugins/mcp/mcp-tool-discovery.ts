import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ListToolsResultSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { HookgateError } from '../../kernel/errors.js';

/** At most this many tools/list pages: a server that never stops paginating (with fresh cursors) is refused. */
export const MAX_TOOL_PAGES = 1_000;

/**
 * Every tool a server lists, page by page: `tools/list` is asked again with
 * each `nextCursor` until a page has none. The SDK's `listTools()` returns one
 * page (and its tool cache keeps only the last page's), so the pages are
 * requested here, through `client.request`. A cursor the server already gave
 * throws (it would loop forever), as does a run past {@link MAX_TOOL_PAGES}.
 * Errors are MCP_DISCOVERY_FAILED naming the server (`where`: its name and
 * URL); the caller closes the client.
 */
export async function listAllTools(client: Client, server: { name: string; where: string }, timeoutMs: number): Promise<Tool[]> {
  const tools: Tool[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 1; ; page++) {
    if (page > MAX_TOOL_PAGES) {
      throw new HookgateError('MCP_DISCOVERY_FAILED', `${server.where}: tools/list gave more than ${MAX_TOOL_PAGES} pages`, { details: { server: server.name } });
    }
    const result = await client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, ListToolsResultSchema, { timeout: timeoutMs });
    tools.push(...result.tools);
    const next = result.nextCursor;
    if (next === undefined) return tools;
    if (seen.has(next)) {
      throw new HookgateError('MCP_DISCOVERY_FAILED', `${server.where}: tools/list repeated the cursor ${JSON.stringify(next.slice(0, 200))} (page ${page + 1}); discovery stopped instead of looping`, {
        details: { server: server.name, page: page + 1 },
      });
    }
    seen.add(next);
    cursor = next;
  }
}

/** Tools that can only run as MCP tasks (`execution.taskSupport: 'required'`): hookgate calls tools directly, so these are skipped. */
export function requiresTask(tool: Tool): boolean {
  return tool.execution?.taskSupport === 'required';
}
