import { HookgateError } from '../../kernel/errors.js';
import type { SecretScrubber } from '../../kernel/logger.js';

const TEMPLATE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * The headers of a configured server with each `${VAR}` read from `env`, at
 * start. Every value read, and every whole header value built from one, is
 * registered with `secrets` before it is returned, so logs, errors and tool
 * results never show it; the config keeps the templates. Throws
 * MCP_OPTIONS_INVALID naming `mcp.servers.<server>.headers.<name>` and the
 * variable (never a value) when a variable is unset or empty, or resolves to
 * CR, LF or NUL.
 */
export function resolveConfiguredHeaders(
  server: string,
  headers: Readonly<Record<string, string>>,
  env: Readonly<Record<string, string | undefined>>,
  secrets: SecretScrubber,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, template] of Object.entries(headers)) {
    const field = `mcp.servers.${server}.headers.${name}`;
    let fromEnv = false;
    const value = template.replace(TEMPLATE, (_m, variable: string) => {
      const secret = env[variable];
      if (secret === undefined || secret === '') {
        throw new HookgateError('MCP_OPTIONS_INVALID', `${field}: the environment variable ${variable} is not set`, { details: { server, field, variable } });
      }
      if (/[\r\n\0]/.test(secret)) {
        throw new HookgateError('MCP_OPTIONS_INVALID', `${field}: the environment variable ${variable} holds CR, LF or NUL`, { details: { server, field, variable } });
      }
      secrets.add(secret);
      fromEnv = true;
      return secret;
    });
    if (fromEnv) secrets.add(value);
    out[name] = value;
  }
  return out;
}
