/**
 * Every error hookgate raises has a stable code listed here, with the category
 * that tells an operator whose problem it is. Codes never change meaning; new
 * failures get new codes.
 */
export type ErrorCategory = 'user' | 'system' | 'third_party';

/** Every error code with its category and a one-line summary. */
export const ERROR_CATALOG = {
  // kernel and plugins
  PLUGIN_INVALID_ID: { category: 'user', summary: 'a plugin id is not a kebab-case name' },
  PLUGIN_DUPLICATE_ID: { category: 'user', summary: 'two plugins share one id' },
  PLUGIN_MISSING_REQUIREMENT: { category: 'user', summary: 'a plugin requires a token nothing provides' },
  PLUGIN_CYCLE: { category: 'user', summary: 'plugins require each other in a cycle' },
  PLUGIN_DUPLICATE_PROVIDER: { category: 'user', summary: 'two plugins provide the same single token' },
  PLUGIN_UNDECLARED_BINDING: { category: 'system', summary: 'a plugin bound a token it does not list in provides' },
  PLUGIN_REGISTER_FAILED: { category: 'system', summary: 'a plugin failed while binding its tokens' },
  PLUGIN_START_FAILED: { category: 'system', summary: 'a plugin failed to start' },
  PLUGIN_READY_FAILED: { category: 'system', summary: "a plugin failed in its ready phase (after every plugin started and the runtime was built)" },
  PLUGIN_STOP_FAILED: { category: 'system', summary: 'a plugin failed to stop' },
  KERNEL_FROZEN: { category: 'user', summary: 'the kernel is started; plugins and hooks can no longer be added' },
  KERNEL_NOT_STARTED: { category: 'user', summary: 'the kernel must be started first' },
  KERNEL_STOPPED: { category: 'user', summary: 'the kernel was stopped' },
  TOKEN_NOT_BOUND: { category: 'system', summary: 'nothing is bound to a token' },
  // configuration
  CONFIG_INVALID: { category: 'user', summary: 'the configuration does not match its schema' },
  CONFIG_UNREADABLE: { category: 'user', summary: 'the configuration file cannot be read or parsed' },
  AGENT_INVALID: { category: 'user', summary: 'an agent definition does not match its schema' },
  // store
  STORE_CORRUPT: { category: 'system', summary: 'the database file is not a hookgate database or is damaged' },
  STORE_SCHEMA_NEWER: { category: 'user', summary: 'the database was written by a newer hookgate' },
  STORE_NOT_FOUND: { category: 'user', summary: 'a record does not exist' },
  STORE_CONFLICT: { category: 'user', summary: 'a record is not in the state the change expects' },
  STORE_VERSION_CONFLICT: { category: 'system', summary: 'another process or connection changed the operation first (compare-and-swap on its state version)' },
  // runtime
  OPERATION_NOT_FOUND: { category: 'user', summary: 'no operation has this id' },
  OPERATION_NOT_WAITING: { category: 'user', summary: 'the operation is not waiting for a human decision' },
  OPERATION_NOT_DONE: { category: 'user', summary: 'the operation ended in error or was interrupted, so it has no final text (run.text())' },
  THREAD_NOT_FOUND: { category: 'user', summary: 'no thread has this id (execAgent({ threadId }), run --thread)' },
  THREAD_BUSY: { category: 'user', summary: 'the thread has an operation that is still running or waiting; finish, decide or abort it before continuing the thread' },
  THREAD_AGENT_MISMATCH: { category: 'user', summary: 'the thread belongs to another agent than the one asked to continue it' },
  OPERATION_LEASED: { category: 'user', summary: "another process runs the operation now (it holds the operation's lease); wait for it to park or finish, or take an unexpired lease over with --force" },
  LEASE_REQUEST_INVALID: { category: 'user', summary: 'a lease request has no owner or no positive ttlMs' },
  OPERATION_NOT_RUNNING: { category: 'user', summary: 'the operation is not one a crashed process left running' },
  MODEL_NOT_FOUND: { category: 'user', summary: 'no model provider has this name' },
  MODEL_SPECIFIER_INVALID: { category: 'user', summary: 'a model specifier is not "provider/model"' },
  MODEL_FAILED: { category: 'third_party', summary: 'the model provider failed' },
  TOOL_NOT_FOUND: { category: 'user', summary: 'the model asked for a tool the agent does not have' },
  TOOL_FAILED: { category: 'third_party', summary: 'a tool threw' },
  TOOL_ARGS_INVALID: { category: 'user', summary: 'a tool was called with arguments that do not match its parameters' },
  TOOL_TARGET_INVALID: { category: 'user', summary: 'a tool target (file or folder) is missing or of the wrong kind' },
  SANDBOX_ESCAPE: { category: 'user', summary: 'a path leaves the sandbox folder' },
  AGENT_NOT_FOUND: { category: 'user', summary: 'no agent has this id' },
  AGENT_SOURCE_NOT_FOUND: { category: 'user', summary: 'no agent source has this id (execAgent({ agentSource }), or the source an operation was started from is not in this kernel)' },
  AGENT_SOURCE_FAILED: { category: 'system', summary: "an agent source threw or rejected when asked for an operation's agent (at start or before a step); the error names the source" },
  AGENT_SOURCE_INVALID: { category: 'system', summary: 'an agent source is not valid, or returned a view (instructions, model, tools, allow-list...) that is not valid; the error names the source' },
  // agent API (document 001): each also has the document's wire `type` and HTTP status (plugins/agent-api/agent-errors.ts)
  INVALID_REQUEST: { category: 'user', summary: 'a request to the agent API is malformed (message, ids, uid with initialData, payload shape)' },
  AGENT_INSTANCE_NOT_FOUND: { category: 'user', summary: 'a send conditioned on a uid found no instance, or another incarnation' },
  AGENT_INSTANCE_EXISTS: { category: 'user', summary: 'a send conditioned on uid null found an existing instance (its uid is in details)' },
  AGENT_RENDER_INVALID: { category: 'user', summary: 'an agent function broke a rule of rendering (async, wrong return type, hook outside a render, nested render, duplicate name)' },
  TOOL_NAME_CONFLICT: { category: 'user', summary: 'one render declared two tools with the same name' },
  AGENT_RUN_FAILED: { category: 'user', summary: 'an awaited send settled failed or aborted (outcome and cause attached)' },
  SUBMISSION_RETRY_EXHAUSTED: { category: 'system', summary: "a submission was interrupted more often than its agent's durability.maxAttempts allows" },
  SUBMISSION_TIMEOUT: { category: 'user', summary: "a submission ran past its agent's durability.timeoutMs" },
  // MCP servers (plugins/mcp)
  MCP_OPTIONS_INVALID: { category: 'user', summary: 'connectMcpServer or the mcp config section was given a bad server name, URL, transport, header or timeout' },
  MCP_CONNECT_FAILED: { category: 'third_party', summary: 'an MCP server could not be reached or refused the MCP handshake (the client is closed)' },
  MCP_DISCOVERY_FAILED: { category: 'third_party', summary: "an MCP server's tools/list failed, repeated a pagination cursor, or listed tools whose adapted names collide (the client is closed)" },
  MCP_TOOL_ERROR: { category: 'third_party', summary: 'an MCP tool answered with isError: its flattened content is the error the model sees' },
  MCP_OUTPUT_INVALID: { category: 'third_party', summary: "an MCP tool's structured content is missing or does not match the output schema it declared" },
  MCP_CALL_FAILED: { category: 'third_party', summary: 'an MCP tool call did not complete: it timed out, the connection to the server broke, or the server answered with a protocol error' },
  AGENT_NOT_REGISTERED: { category: 'user', summary: 'dispatch / init / getAgentInstance was given a function that is not one of the agents start({ agents }) registered' },
  AGENT_RUNTIME_NOT_STARTED: { category: 'user', summary: 'the agent API was used before start() configured a runtime in this process (or after stop())' },
  AGENT_RUNTIME_RUNNING: { category: 'user', summary: 'start() was called while this process already has an agent runtime (one per process; stop it first)' },
  // the sandbox (plugins/sandbox-local) and the harness (plugins/agent-api)
  SANDBOX_ARGUMENT_INVALID: { category: 'user', summary: 'a sandbox call was given a bad argument (empty or NUL command, bad env, timeoutMs out of range, content of the wrong type)' },
  SANDBOX_EXEC_TIMEOUT: { category: 'user', summary: 'a sandbox exec ran past its deadline; the command and everything it started were killed' },
  SANDBOX_EXEC_FAILED: { category: 'system', summary: 'a sandbox exec could not start the shell' },
  SANDBOX_UNAVAILABLE: { category: 'user', summary: 'harness.sandbox was used but no plugin provides the Sandbox token (sandbox-local is bundled)' },
  SESSION_BUSY: { category: 'user', summary: "a harness prompt or compact() while another operation runs on the harness's conversation (one at a time)" },
  RESULT_UNAVAILABLE: { category: 'user', summary: 'a harness prompt with a result schema ended without a valid finish call (the model gave up or ran out of follow-ups)' },
  HARNESS_PROMPT_FAILED: { category: 'user', summary: "a harness prompt's operation ended in error, or a compaction it asked for wrote no summary" },
  HARNESS_CLOSED: { category: 'user', summary: 'a harness was used after the tool call or callback that received it ended (a harness is scoped to its invocation)' },
  HARNESS_OPTIONS_INVALID: { category: 'user', summary: 'harness.prompt() was given bad text or options (result schema, tools, model, signal, images)' },
  // hooks
  HOOK_INVALID: { category: 'user', summary: 'a hook registration is invalid' },
  HOOK_RESTORE_FAILED: { category: 'system', summary: 'persisted hooks could not be restored' },
  HOOK_MOCK_INVALID: { category: 'user', summary: 'a beforeToolCall handler passed mock() something that is not a valid tool result' },
  HOOK_HANDLER_TIMEOUT: { category: 'user', summary: 'a local hook handler did not settle within hooks.handlerTimeoutMs' },
  WEBHOOK_CONFIG_INVALID: { category: 'user', summary: 'a webhook configuration is invalid' },
  WEBHOOK_DELIVERY_FAILED: { category: 'third_party', summary: 'a webhook could not be delivered' },
  CRITICAL_HOOK_DELIVERY: { category: 'third_party', summary: 'a webhook with fallback none failed' },
  // policies
  POLICY_INVALID: { category: 'user', summary: 'a policy pack is invalid' },
  POLICY_EVALUATION_FAILED: { category: 'system', summary: 'a policy could not be evaluated' },
} as const satisfies Record<string, { category: ErrorCategory; summary: string }>;

/** A stable error code (`HookgateError.code`). */
export type ErrorCode = keyof typeof ERROR_CATALOG;
