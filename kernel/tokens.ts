/**
 * The kernel's service tokens. Each is addressed by name from the package root
 * (`import { ToolSources, Store } from 'hookgate'`). A single-value token and
 * its contract share one name: `Store` is the token (`ctx.resolve(Store)`) and
 * also the type of what it resolves to.
 */
import type { KernelConfig } from './kernel-config.js';
import type { HookDispatcher } from './hooks/hook-dispatcher.js';
import type { Operations as OperationsContract } from './operations.js';
import type { Logger as LoggerContract, SecretScrubber } from './logger.js';
import type { Store as StoreContract } from './store.js';
import type { ModelProvider } from './model.js';
import type { ToolSource } from './tools.js';
import { createToken } from './token.js';
import type { WebhookTransport } from './hooks/webhook-transport.js';
import type { UserDirectory as UserDirectoryContract } from './user-directory.js';
import type { ToolPolicy } from './tool-policy.js';
import type { AgentSource } from './runtime/agent-source.js';
import type { Sandbox as SandboxContract } from './sandbox.js';
import type { StepQueue as StepQueueContract } from './step-queue.js';
import type { OperationEventRelay as OperationEventRelayContract } from './operation-event-relay.js';
import type { ThreadHooksService } from './runtime/thread-hooks-port.js';

// Bound by the kernel itself.

/**
 * The configuration the kernel was given (bound by the kernel). Typed as the
 * kernel's own part of it (`KernelConfig`); what `loadConfig` builds is a
 * `HookgateConfig`, which the bundled plugins read through `HookgateConfigToken`
 * (the same binding, from config/).
 */
export const Config = createToken<KernelConfig>('kernel.config');
/** The kernel's part of the configuration (`KernelConfig`). */
export type Config = KernelConfig;
/** The kernel's structured logger; secrets registered with `Secrets` are scrubbed from it (bound by the kernel). */
export const Logger = createToken<LoggerContract>('kernel.logger');
/** A structured logger (`debug` / `info` / `warn` / `error`, `child(fields)`). */
export type Logger = LoggerContract;
/** The secret scrubber: values added here never reach logs, errors, the store or output (bound by the kernel). */
export const Secrets = createToken<SecretScrubber>('kernel.secrets');
/** The kernel's environment (`createKernel({ env })`, default `process.env`): plugins read variables here, read at use time. */
export const Environment = createToken<Readonly<Record<string, string | undefined>>>('kernel.env');

// Bound by the kernel once its runtime is built: resolvable from a plugin's `ready` phase on.

/** Start, decide on, resume, abort, complete and wait for operations (bound by the kernel before `ready`). */
export const Operations = createToken<OperationsContract>('kernel.operations');
/** What a plugin may do with operations (`kernel/operations.ts`). */
export type Operations = OperationsContract;
/** The hook dispatcher shared by every operation (bound by the kernel before `ready`). */
export const Hooks = createToken<HookDispatcher>('kernel.hooks');
/** The hook dispatcher (`HookDispatcher`). */
export type Hooks = HookDispatcher;

// Provided by plugins.

/** The one store (operations, steps, messages, users, the decision log); store-sqlite or store-memory provide it. */
export const Store = createToken<StoreContract>('store');
/** The store contract every store plugin implements. */
export type Store = StoreContract;
/** Model providers, one per plugin that provides it, looked up by `ModelProvider.name` (an agent's `model.provider`). */
export const ModelProviders = createToken<ModelProvider>('model-provider', { multi: true });
/** Tool sources: every tool each lists becomes callable as `identifier/apiName` by agents that allow it. */
export const ToolSources = createToken<ToolSource>('tool-source', { multi: true });
/** Webhook transports (fetch, qstash): how webhook hooks are delivered. */
export const WebhookTransports = createToken<WebhookTransport>('webhook-transport', { multi: true });
/** Looks up a user's email for webhook payloads (`userEmail`); without it, the store's users are used. */
export const UserDirectory = createToken<UserDirectoryContract>('user-directory');
/** The user directory contract. */
export type UserDirectory = UserDirectoryContract;
/** In-process tool policies (the policy engine), asked before webhook controls. */
export const ToolPolicies = createToken<ToolPolicy>('tool-policy', { multi: true });
/**
 * Agent sources (agent functions, agents whose tools appear at run time):
 * each is added to `kernel.agentSources` when the kernel starts, by its id;
 * `execAgent({ agentSource, agentId })` runs an agent from one, asked before
 * every step. Agent files and `kernel.agents.define` are the source `static`.
 */
export const AgentSources = createToken<AgentSource>('agent-source', { multi: true });
/** The agent's environment (document 001's `harness.sandbox`): a shell and file verbs confined to the sandbox (plugin `sandbox-local`). */
export const Sandbox = createToken<SandboxContract>('sandbox');
/** The sandbox contract (kernel/sandbox.ts). */
export type Sandbox = SandboxContract;
/**
 * Queue mode (`execution: queue`, plugin `execution-queue`): each step of an
 * operation is a job on a queue that workers take. Bound, the kernel only
 * admits and enqueues; `kernel.work()` makes the process a worker.
 */
export const StepQueue = createToken<StepQueueContract>('step-queue');
/** The step queue contract (kernel/step-queue.ts). */
export type StepQueue = StepQueueContract;
/**
 * Queue mode (plugin `execution-queue`): relays operation events between the
 * processes sharing a queue, so an API process hears the events of steps
 * that run in workers (live conversation streams). Bound, the kernel opens
 * it at start and closes it at stop.
 */
export const OperationEventRelay = createToken<OperationEventRelayContract>('operation-event-relay');
/** The event relay contract (kernel/operation-event-relay.ts). */
export type OperationEventRelay = OperationEventRelayContract;
/**
 * Document 003's thread hooks (plugin `thread-hooks`): the runtime opens the
 * hooks an operation selects through it. Unbound: no thread hook runs, and an
 * agent or execAgent call that selects one is refused (THREAD_HOOK_MISSING).
 */
export const ThreadHooks = createToken<ThreadHooksService>('thread-hooks');
/** The thread hooks service contract (kernel/runtime/thread-hooks-port.ts). */
export type ThreadHooks = ThreadHooksService;
