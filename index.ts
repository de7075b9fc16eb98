/**
 * hookgate's library surface, everything a plugin or an embedding script
 * imports from `'hookgate'`: `createKernel` with the plugins the config
 * selects, the `Kernel` and its `HookDispatcher`, `definePlugin` /
 * `createToken` and every service token by name (`ToolSources`,
 * `ModelProviders`, `Store`, ...), the tool / model / store contracts, the
 * hook event types, `HookgateError` with its codes, `definePolicy` for
 * code policies, and `connectMcpServer` for MCP tools.
 */
import type { HookgateConfig } from './config/defaults.js';
import { loadConfig, type LoadConfigOptions } from './config/load-config.js';
import { Kernel, type KernelOptions } from './kernel/kernel.js';
import type { Plugin } from './kernel/plugin.js';
import { pluginsForConfig, resolvePlugins } from './plugins/catalog.js';

export * from './kernel/index.js';
export { loadConfig, type LoadConfigOptions } from './config/load-config.js';
export { loadAgentFile } from './config/agent-file.js';
export type { HookgateConfig } from './config/defaults.js';
export { pluginsForConfig, resolvePlugins, BUNDLED_PLUGINS } from './plugins/catalog.js';
export { loadPluginModules } from './plugins/plugin-modules.js';
export { HookgateConfigToken } from './config/config-token.js';
export { definePolicy, type CodePolicyDefinition, type CodePolicyVerdict, type PolicyEventInput } from './policies/define-policy.js';
export type { PolicyEffect, PolicyEventName } from './policies/policy-types.js';
export {
  /**
   * Connects to a remote MCP server (streamable HTTP or SSE) and adapts its
   * tools into ordinary tools named `mcp__<server>__<tool>` (document 001's
   * `connectMcpServer`). Asynchronous; call at startup. Rejects with
   * MCP_OPTIONS_INVALID, MCP_CONNECT_FAILED or MCP_DISCOVERY_FAILED, the client
   * closed first. See docs/mcp.md.
   */
  connectMcpServer,
  /** The tools of MCP connections as one `ToolSource` (id `mcp`), for a plugin that connects servers itself. */
  McpToolSource,
  /** The most an MCP tool result may hold (1 MiB of flattened text plus structured content); beyond it a call is MCP_RESULT_TOO_LARGE. */
  MAX_MCP_RESULT_BYTES,
} from './plugins/mcp/index.js';
export type {
  /** What `connectMcpServer` resolves to: `{ name, tools, close() }`. */
  McpServerConnection,
  /** `connectMcpServer`'s options: url, transport, headers, requestInit, fetch, timeoutMs, resetTimeoutOnProgress. */
  McpServerOptions,
  /** `'streamable-http'` (default) or `'sse'`. */
  McpTransport,
  /** One adapted MCP tool: `name`, `description`, `inputSchema`, `outputSchema?`, `run(args, { signal, toolCallId })`. */
  McpTool,
  /** What an MCP tool's `run` resolves to: the flattened text and the structured content. */
  McpToolResult,
  /** What an MCP tool's `run` gets besides the arguments: `signal`, `toolCallId`. */
  McpToolRunContext,
} from './plugins/mcp/index.js';
// Document 001's agent API: start a runtime, address instances, send messages (plugins/agent-api/).
export { start, type StartOptions, type StartDatabase, type AgentRuntimeHandle } from './plugins/agent-api/start.js';
export { dispatch, type AgentDispatchRequest, type DispatchReceipt } from './plugins/agent-api/dispatch.js';
export { init, type InitOptions, type AgentInstanceHandle, type AgentHandleDispatchRequest, type AgentDispatchOptions } from './plugins/agent-api/init.js';
export { getAgentInstance, type AgentInstanceInfo } from './plugins/agent-api/get-agent-instance.js';
export type { AgentReply } from './plugins/agent-api/agent-reply.js';
export {
  MAX_ATTACHMENT_BASE64_CHARS,
  parseDeliveredMessage,
  renderDeliveredMessage,
  type DeliveredMessage,
  type DeliveredMessageInput,
  type DeliveredAttachment,
  type DeliveredUserMessage,
  type DeliveredSignal,
} from './plugins/agent-api/delivered-message.js';
export {
  AGENT_IDENTITY_PATTERN,
  AGENT_FUNCTION_SOURCE_ID,
  DEFAULT_DURABILITY,
  type Agent,
  type AgentFunction,
  type AgentProps,
  type AgentStatics,
  type DurabilityConfig,
  type StartAgentEntry,
} from './plugins/agent-api/agent.js';
export { useModel, type ModelChoice, type ModelBlock } from './plugins/agent-api/use-model.js';
export { useTool } from './plugins/agent-api/use-tool.js';
export { useInstruction } from './plugins/agent-api/use-instruction.js';
export { usePersistentState, type StateSetter } from './plugins/agent-api/use-persistent-state.js';
export { useInitialData } from './plugins/agent-api/use-initial-data.js';
export { useDataWriter, type DataWriter } from './plugins/agent-api/use-data-writer.js';
export { useDelivery } from './plugins/agent-api/use-delivery.js';
export { useDispatchMessage, type DispatchToSelf } from './plugins/agent-api/use-dispatch-message.js';
export {
  useAgentStart,
  useAgentFinish,
  useResponseStart,
  useResponseFinish,
  type AgentAppendMessage,
  type AgentResponseToolCall,
  type AgentStartContext,
  type AgentFinishContext,
  type ResponseStartContext,
  type ResponseFinishContext,
} from './plugins/agent-api/use-agent-events.js';
export {
  defineTool,
  type ToolContext,
  type ToolOptions,
  type AgentTool,
  type ToolLogger,
  type ToolRunContext,
  type ToolRunResult,
  type ToolInput,
  type ToolOutput,
  type ToolStep,
} from './plugins/agent-api/define-tool.js';
export { MAX_STEP_NAME, MAX_STEP_VALUE_CHARS, MAX_STEPS_PER_CALL } from './plugins/agent-api/tool-step.js';
export { defineSkill, skillPathProblem, type SkillDefinition } from './plugins/agent-api/define-skill.js';
export { useSkill } from './plugins/agent-api/use-skill.js';
export { defineSubagent, GeneralSubagent, GENERAL_SUBAGENT_NAME, type SubagentDefinition, type ThinkingLevel } from './plugins/agent-api/define-subagent.js';
export { useSubagent } from './plugins/agent-api/use-subagent.js';
export { useSandbox, type UseSandboxOptions } from './plugins/agent-api/use-sandbox.js';
export { localSandbox } from './plugins/sandbox-local/local-sandbox-factory.js';
export { MAX_DELEGATION_DEPTH } from './plugins/agent-api/framework-tools.js';
export type { RenderedResources, ResourceEntry } from './plugins/agent-api/render-agent.js';
export { AgentDirectory } from './plugins/agent-api/agent-directory.js';
export {
  AgentApiError,
  InvalidRequestError,
  AgentInstanceNotFoundError,
  AgentInstanceExistsError,
  AgentRenderError,
  ToolNameConflictError,
  AgentRunError,
  SubmissionRetryExhaustedError,
  SubmissionTimeoutError,
  AgentNotRegisteredError,
  AgentRuntimeNotStartedError,
  AgentRuntimeRunningError,
  ToolLegacyDefinitionError,
  ToolInputValidationError,
  ToolOutputValidationError,
  ToolOutputSerializationError,
  ToolStepError,
  ToolCallInterruptedError,
  type ToolValidationIssue,
  SkillDefinitionValidationError,
  SubagentDefinitionValidationError,
  ResourceNameConflictError,
  type DefinitionIssue,
} from './plugins/agent-api/agent-errors.js';
// Document 001's HTTP surface and conversation stream (plugins/agent-api/http/, conversation-stream.ts).
export { createAgentRouter, type AgentRouterTuning } from './plugins/agent-api/http/agent-router.js';
export type { ConversationStreamChunk, ConversationStreamChunkBody, ConversationChunkPosition, ConversationMessage, ConversationMessagePart } from './plugins/agent-api/conversation-stream.js';
export {
  StreamNotFoundError,
  AttachmentNotFoundError,
  RouteNotFoundError,
  MethodNotAllowedError,
  UnsupportedMediaTypeError,
  InvalidJsonError,
  PayloadTooLargeError,
  SessionBusyError,
  ResultUnavailableError,
  HarnessPromptError,
  HarnessOptionsError,
  HarnessClosedError,
} from './plugins/agent-api/agent-errors.js';
// The harness of harness tools and event callbacks (plugins/agent-api/harness.ts).
export type { Harness, PromptOptions, PromptImage, PromptResponse, PromptResultResponse, PromptUsage, PromptModel } from './plugins/agent-api/harness.js';
export type { CallHandle } from './plugins/agent-api/call-handle.js';
/** valibot, the schema library of plugin settings (`definePlugin({ settings: v.object(...) })`), so a plugin needs no second copy. */
export * as v from 'valibot';

/** What `createKernel` takes: the kernel options plus where the config comes from and which plugins to add. */
export interface CreateKernelOptions extends Omit<KernelOptions, 'config' | 'plugins'> {
  /** A loaded config, or how to load one (file, cwd, env); default: ./hookgate.config.yaml or embedded defaults. */
  config?: HookgateConfig | LoadConfigOptions;
  /** Plugins added after the ones the config selects. */
  plugins?: readonly Plugin[];
  /** Replaces the config's plugin selection entirely (`plugins.extra` is then not loaded either). */
  replacePlugins?: readonly Plugin[];
}

/**
 * Builds a kernel with the plugins the config selects (not started: call
 * `start()`). `createKernel()` reads ./hookgate.config.yaml (or runs on
 * embedded defaults); `createKernel({ plugins: [myPlugin] })` adds plugins.
 *
 * With `plugins.extra` in the config, its modules are loaded (dynamic
 * import) when `kernel.start()` begins, since loading is asynchronous: the
 * driver selection (`store.driver`) then also sees their drivers, and
 * `kernel.plugins()` lists them from start on; a missing or invalid module
 * rejects `start()` with CONFIG_INVALID naming `plugins.extra[i]` and the
 * module. Without it, the plugins are chosen here, synchronously (an unknown
 * `store.driver` throws here). `await resolvePlugins(config)` gives the same
 * list ahead of time.
 */
export function createKernel(options: CreateKernelOptions = {}): Kernel<HookgateConfig> {
  const config = isLoaded(options.config) ? options.config : loadConfig(options.config ?? {});
  const added = options.plugins ?? [];
  if (options.replacePlugins) return new Kernel<HookgateConfig>({ ...options, config, plugins: options.replacePlugins });
  if ((config.plugins.extra ?? []).length === 0) return new Kernel<HookgateConfig>({ ...options, config, plugins: [...pluginsForConfig(config), ...added] });
  return new Kernel<HookgateConfig>({ ...options, config, plugins: [], loadPlugins: async () => [...(await resolvePlugins(config)), ...added] });
}

function isLoaded(c: CreateKernelOptions['config']): c is HookgateConfig {
  return typeof c === 'object' && c !== null && 'dataDir' in c && 'baseDir' in c;
}
