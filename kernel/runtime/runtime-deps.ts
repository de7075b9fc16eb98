import type { HookDispatcher } from '../hooks/hook-dispatcher.js';
import type { Logger } from '../logger.js';
import type { ModelProvider } from '../model.js';
import type { Store } from '../store.js';
import type { ToolPolicy } from '../tool-policy.js';
import type { ToolDefinition, ToolSource } from '../tools.js';
import type { AgentRegistry } from './agent-registry.js';
import type { OperationEvents } from './operation-events.js';

/** What the step executors use; resolved once when the kernel starts. */
export interface RuntimeDeps {
  store: Store;
  dispatcher: HookDispatcher;
  logger: Logger;
  events: OperationEvents;
  agents: AgentRegistry;
  models: ReadonlyMap<string, ModelProvider>;
  tools: ReadonlyMap<string, { tool: ToolDefinition; source: ToolSource }>;
  policies: readonly ToolPolicy[];
}

export function toolKey(identifier: string, apiName: string): string {
  return `${identifier}/${apiName}`;
}
