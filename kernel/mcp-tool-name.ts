/**
 * How MCP tools are named, in one place: document 001 names an MCP tool
 * `mcp__<server>__<tool>` (characters outside `[A-Za-z0-9_-]` replaced with
 * `_`); inside hookgate it is the tool `mcp__<server>/<tool>` (identifier
 * `mcp__<server>`, apiName `<tool>`), so `mcp__<server>/*` (spelled
 * `mcp__<server>__*` in an agent file) allows a whole server and policies
 * match `^mcp__<server>/`. A server name may not contain `__` nor start or
 * end with `_` once sanitized, so the first `__` after `mcp__` always ends it.
 */

/** What every MCP tool's name starts with. */
export const MCP_NAME_PREFIX = 'mcp__';

/** `a.b c` -> `a_b_c`: every character outside `[A-Za-z0-9_-]` becomes `_` (document 001). */
export function sanitizeMcpNamePart(value: string): string {
  return value.replace(/[^A-Za-z0-9_-]/g, '_');
}

/** A sanitized server name that keeps `mcp__<server>__<tool>` splittable: no `__`, no `_` at either end. */
const SERVER_PART = /^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$/;

/**
 * Why a server name cannot name MCP tools, or undefined when it can. Checked
 * on the sanitized form, which is what tool names carry.
 */
export function mcpServerNameProblem(name: string): string | undefined {
  if (typeof name !== 'string' || name.length === 0) return 'expected a non-empty server name';
  const part = sanitizeMcpNamePart(name);
  if (!SERVER_PART.test(part)) {
    return `sanitized to "${part}", which starts or ends with "_" or holds "__" (the separator of mcp__<server>__<tool>); use letters, digits, "-" and single "_"`;
  }
  return undefined;
}

/** The hookgate identifier of a server's tools: `mcp__<server>` (server name sanitized). */
export function mcpIdentifier(server: string): string {
  return `${MCP_NAME_PREFIX}${sanitizeMcpNamePart(server)}`;
}

/** Document 001's name of an MCP tool: `mcp__<server>__<tool>`, both parts sanitized. */
export function mcpToolName(server: string, tool: string): string {
  return `${mcpIdentifier(server)}__${sanitizeMcpNamePart(tool)}`;
}

/**
 * `mcp__github__create_issue` -> `{ identifier: 'mcp__github', apiName: 'create_issue' }`
 * (`mcp__github__*` gives apiName `*`); undefined for a name that is not of
 * that form. The server part ends at the first `__` after the prefix.
 */
export function splitMcpToolName(name: string): { identifier: string; apiName: string } | undefined {
  if (!name.startsWith(MCP_NAME_PREFIX)) return undefined;
  const at = name.indexOf('__', MCP_NAME_PREFIX.length);
  if (at <= MCP_NAME_PREFIX.length || at + 2 >= name.length) return undefined;
  const server = name.slice(MCP_NAME_PREFIX.length, at);
  if (!SERVER_PART.test(server)) return undefined;
  return { identifier: name.slice(0, at), apiName: name.slice(at + 2) };
}

/** Whether `identifier` is an MCP server's (`mcp__<server>` with a valid server part). */
export function isMcpIdentifier(identifier: string): boolean {
  return identifier.startsWith(MCP_NAME_PREFIX) && SERVER_PART.test(identifier.slice(MCP_NAME_PREFIX.length));
}
