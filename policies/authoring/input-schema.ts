import { ARGV_ARG_NAMES, COMMAND_ARG_NAMES, PATH_ARG_NAMES, URL_ARG_NAMES } from '../canonical-args.js';
import type { PolicyEventName } from '../policy-types.js';
import type { JsonSchema } from './json-schema-lookup.js';
import type { CatalogTool } from './tool-catalog.js';

/**
 * The policy input (policies/policy-input.ts) as a JSON Schema, for one tool
 * and one event: what a `when` path can reach. `args` is the tool's own input
 * schema; `canonical` has an entry per argument that gets a canonical form;
 * `result` and `resultText` exist only for result events. Without a tool (a
 * policy with no `match`: every tool), `args` and `canonical` are open.
 */
export function policyInputSchema(event: PolicyEventName, tool: CatalogTool | undefined): Record<string, unknown> {
  const str = { type: 'string' };
  const properties: Record<string, JsonSchema> = {
    type: { const: event },
    tool: tool ? { const: tool.key } : str,
    identifier: tool ? { const: tool.identifier } : str,
    apiName: tool ? { const: tool.apiName } : str,
    args: tool ? tool.parameters : { type: 'object' },
    canonical: tool ? canonicalSchema(tool) : { type: 'object' },
    toolCallId: str,
    nativeToolCallId: str,
    assistantMessageId: str,
    callIndex: { type: 'number' },
    stepIndex: { type: 'number' },
    operationId: str,
    executor: { enum: ['server', 'client'] },
    agentId: str,
    userId: str,
    topicId: str,
    sessionId: str,
    threadId: str,
    groupId: str,
    taskId: str,
    workspaceId: str,
    documentId: str,
    sourceMessageId: str,
    toolMessageId: str,
    parentOperationId: str,
    toolSource: tool ? { const: tool.toolSource } : str,
    executionTarget: str,
    activeDeviceId: str,
    timestamp: str,
  };
  if (event !== 'beforeToolCall') {
    properties.result = {
      type: 'object',
      properties: {
        content: str,
        success: event === 'onToolCallError' ? { const: false } : { type: 'boolean' },
        executionTime: { type: 'number' },
        error: str,
        state: { type: 'object' },
        data: {},
        args: {},
        workRegistration: { type: 'object' },
      },
      additionalProperties: false,
    };
    properties.resultText = str;
  }
  return { type: 'object', properties, additionalProperties: false };
}

/** The fields a policy input has for these events, for "did you mean" hints. */
export function policyInputFields(events: readonly PolicyEventName[]): string[] {
  const fields = new Set<string>();
  for (const e of events) for (const k of Object.keys(policyInputSchema(e, undefined).properties as object)) fields.add(k);
  return [...fields];
}

const URL_PARTS = { href: { type: 'string' }, scheme: { type: 'string' }, host: { type: 'string' }, port: { type: 'number' }, ip: { type: 'string' } };
const CANONICAL: Record<'path' | 'url' | 'command', Record<string, unknown>> = {
  path: { type: 'object', properties: { kind: { const: 'path' }, raw: {}, path: { type: 'string' }, absolute: { type: 'string' } }, additionalProperties: false },
  url: { type: 'object', properties: { kind: { const: 'url' }, raw: {}, ...URL_PARTS }, additionalProperties: false },
  command: {
    type: 'object',
    properties: {
      kind: { const: 'command' },
      raw: {},
      words: { type: 'array', items: { type: 'string' } },
      text: { type: 'string' },
      urls: { type: 'array', items: { type: 'object', properties: URL_PARTS, additionalProperties: false } },
    },
    additionalProperties: false,
  },
};

/**
 * `canonical` for one tool: the forms the engine derives from well-known
 * top-level argument names the schema declares; a source that describes its
 * own arguments (`canonicalArgs`, other than the builtin one, whose forms are
 * the derived names) may add any argument.
 */
function canonicalSchema(tool: CatalogTool): Record<string, unknown> {
  const properties: Record<string, JsonSchema> = {};
  const declared = Object.keys(((tool.parameters as { properties?: object }).properties ?? {}) as object);
  for (const name of declared) {
    if (PATH_ARG_NAMES.includes(name)) properties[name] = CANONICAL.path;
    else if (URL_ARG_NAMES.includes(name)) properties[name] = CANONICAL.url;
    else if (COMMAND_ARG_NAMES.includes(name) || ARGV_ARG_NAMES.includes(name)) properties[name] = CANONICAL.command;
  }
  const open = tool.describesCanonical && tool.toolSource !== 'builtin';
  return { type: 'object', properties, additionalProperties: open ? { anyOf: [CANONICAL.path, CANONICAL.url, CANONICAL.command] } : false };
}
