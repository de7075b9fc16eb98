import type { HookDispatcher } from '../hooks/hook-dispatcher.js';
import type { Logger } from '../logger.js';
import type { ModelProvider } from '../model.js';
import type { Store } from '../store.js';
import type { ToolPolicy } from '../tool-policy.js';
import type { AgentRegistry } from './agent-registry.js';
import type { AgentSourceRegistry } from './agent-source-registry.js';
import type { ToolEntry } from './call-facts.js';
import type { OperationEvents } from './operation-events.js';
import type { ThreadHooksService } from './thread-hooks-port.js';

/** What the step executors use; resolved once when the kernel starts. */
export interface RuntimeDeps {
  store: Store;
  dispatcher: HookDispatcher;
  logger: Logger;
  events: OperationEvents;
  agents: AgentRegistry;
  /** Where each operation's agent is read from before every step (the static source: `agents`). */
  agentSources: AgentSourceRegistry;
  models: ReadonlyMap<string, ModelProvider>;
  /**
   * The kernel's tool catalogue: every tool its ToolSources listed at start,
   * keyed `identifier/apiName`. The static source's steps run with it; a step
   * of another source runs with the tools of its view (`toolMapOf`).
   */
  tools: ReadonlyMap<string, ToolEntry>;
  policies: readonly ToolPolicy[];
  /** Document 003's thread hooks (the `ThreadHooks` token), when a plugin provides them. */
  threadHooks?: ThreadHooksService;
}

/** The key of a tool in a tool map: `identifier/apiName`. */
export function toolKey(identifier: string, apiName: string): string {
  return `${identifier}/${apiName}`;
}
