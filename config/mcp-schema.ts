import * as v from 'valibot';
import { CONTROL_CHARACTERS, findTemplateVariables } from '../kernel/hooks/webhook/header-templates.js';
import { mcpServerNameProblem } from '../kernel/mcp-tool-name.js';

/** The transports a configured server may use. */
const TRANSPORTS = ['streamable-http', 'sse'] as const;

/** The range of `mcp.servers.<name>.timeoutMs` (README, Configuration). */
export const MCP_TIMEOUT_RANGE = { min: 1, max: 86_400_000 } as const;

/** Header names the MCP transport sets itself (or HTTP forbids): a config cannot override them. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'accept', 'connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id']);
/** Header names whose values are credentials: in the config they must come from the environment (`${VAR}`). */
export const CREDENTIAL_HEADER = /auth|token|key|secret|cookie|session|password|credential|signature/i;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const serverName = v.pipe(
  v.string(),
  v.check((name) => mcpServerNameProblem(name) === undefined, 'expected a server name of letters, digits, "-" and single "_" (it becomes mcp__<server>__<tool>)'),
);

const headerValue = v.pipe(
  v.string(),
  v.check((s) => !CONTROL_CHARACTERS.test(s), 'expected a header value without CR, LF or NUL'),
  v.check((s) => !findTemplateVariables(s).malformed, 'expected ${VAR} templates of letters, digits and "_" only'),
);

const headers = v.pipe(
  v.record(v.pipe(v.string(), v.regex(HEADER_NAME, 'expected an HTTP header name')), headerValue),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    for (const [name, value] of Object.entries(dataset.value)) {
      if (RESERVED_HEADERS.has(name.toLowerCase())) addIssue({ message: `header "${name}" is set by the MCP transport and cannot be configured`, path: [{ type: 'object', origin: 'value', input: dataset.value, key: name, value }] });
      else if (CREDENTIAL_HEADER.test(name) && findTemplateVariables(value).variables.length === 0) {
        addIssue({
          message: `header "${name}" carries a credential: name the environment variable that holds it ("Bearer \${MY_TOKEN}"), secrets never go in the file`,
          path: [{ type: 'object', origin: 'value', input: dataset.value, key: name, value }],
        });
      }
    }
  }),
);

const timeoutMs = v.pipe(
  v.union([v.number(), v.pipe(v.string(), v.regex(/^\d+$/), v.transform(Number))], 'expected a number'),
  v.check((n) => Number.isInteger(n) && n >= MCP_TIMEOUT_RANGE.min && n <= MCP_TIMEOUT_RANGE.max, `expected a whole number from 1 to 86,400,000 (milliseconds)`),
);

/** One configured MCP server. */
const ServerSchema = v.strictObject({
  url: v.pipe(
    v.string(),
    v.url('expected an absolute URL'),
    v.check((u) => /^https?:$/.test(new URL(u).protocol), 'expected an http(s) URL'),
    v.check((u) => new URL(u).username === '' && new URL(u).password === '', 'expected a URL without credentials (put them in headers, from the environment)'),
  ),
  transport: v.optional(v.picklist(TRANSPORTS, `expected one of ${TRANSPORTS.join(', ')}`)),
  /** Sent with every request. `${VAR}` is read from the environment when the kernel starts, never stored. */
  headers: v.optional(headers),
  timeoutMs: v.optional(timeoutMs),
  resetTimeoutOnProgress: v.optional(v.union([v.boolean(), v.pipe(v.picklist(['true', 'false']), v.transform((s) => s === 'true'))], 'expected true or false')),
});

/**
 * `mcp:` in hookgate.config.yaml: MCP servers by name. The mcp plugin
 * connects to each when the kernel starts; their tools are
 * `mcp__<name>__<tool>`, allowed in agent files like any other tool.
 */
export const McpSchema = v.strictObject({
  servers: v.optional(v.record(serverName, ServerSchema)),
});

/** A configured MCP server with its defaults. Header values are still templates (`Bearer ${TOKEN}`). */
export interface McpServerConfig {
  url: string;
  transport: (typeof TRANSPORTS)[number];
  headers: Readonly<Record<string, string>>;
  /** Undefined: the SDK's default (60 s). */
  timeoutMs?: number;
  resetTimeoutOnProgress: boolean;
}

/** The `mcp` section with defaults filled in. */
export interface McpConfig {
  servers: Readonly<Record<string, McpServerConfig>>;
}

/** Defaults: streamable HTTP, no headers, the SDK's timeout, no progress resets. */
export function mcpConfig(parsed: v.InferOutput<typeof McpSchema> | undefined): McpConfig {
  const servers: Record<string, McpServerConfig> = {};
  for (const [name, s] of Object.entries(parsed?.servers ?? {})) {
    servers[name] = {
      url: s.url,
      transport: s.transport ?? 'streamable-http',
      headers: s.headers ?? {},
      ...(s.timeoutMs !== undefined ? { timeoutMs: s.timeoutMs } : {}),
      resetTimeoutOnProgress: s.resetTimeoutOnProgress ?? false,
    };
  }
  return { servers };
}
