import type { ThreadHookCalls, ThreadHookHost, ThreadHookLike, ThreadHooksService } from '../../kernel/runtime/thread-hooks-port.js';
import { TOOL_CALL_STARTED_WAIT_MS, ThreadHookChain } from './thread-hook-chain.js';
import { mightSelect, selectThreadHooks } from './thread-hook-selection.js';
import { ThreadHookSet, type SourcedThreadHook } from './thread-hook-set.js';
import type { ThreadHookDefinition } from './define-hook.js';

/**
 * The thread hooks this process knows, and the opening of an operation's
 * hooks (the `ThreadHooks` token's service). Known hooks: the hooks folder
 * (loaded once at start), each agent's code hooks (`addAgentHooks`), and the
 * hooks one execAgent call passes in code. An id is unique across all the
 * hooks one operation can see (THREAD_HOOK_INVALID naming both sources).
 */
export class ThreadHooksRuntime implements ThreadHooksService {
  private folder: readonly SourcedThreadHook[] = [];
  /** How long a tool call's `tool_call_started` hooks are waited for before the run goes on (document 003: 30 s; the hooks are not cancelled). */
  toolCallStartedWaitMs = TOOL_CALL_STARTED_WAIT_MS;
  private readonly agentHooks = new Map<string, SourcedThreadHook[]>();

  /** Replaces the hooks folder's hooks (at start; a validated set). */
  setFolderHooks(hooks: readonly SourcedThreadHook[]): void {
    new ThreadHookSet(hooks);
    this.folder = Object.freeze([...hooks]);
  }

  addAgentHooks(agentId: string, hooks: readonly ThreadHookLike[], source: string): void {
    const next = [...(this.agentHooks.get(agentId) ?? []), ...hooks.map((definition) => ({ definition: definition as unknown as ThreadHookDefinition, source }))];
    // Validated (and duplicates refused) before anything is kept.
    new ThreadHookSet(next);
    this.agentHooks.set(agentId, next);
  }

  open(host: ThreadHookHost): ThreadHookCalls | undefined {
    const agent = host.agent();
    const own = this.agentHooks.get(agent.id) ?? [];
    if (host.codeHooks.length === 0 && !mightSelect(host.record, agent, host.agentDefinition, own.length > 0)) return undefined;
    const code = host.codeHooks.map((definition) => ({ definition: definition as unknown as ThreadHookDefinition, source: 'code' }));
    const known = new ThreadHookSet([...this.folder, ...own, ...code]);
    const selected = selectThreadHooks({ record: host.record, agent, agentDefinition: host.agentDefinition, known, agentCodeIds: own.map((h) => h.definition.id) });
    return selected.length === 0 ? undefined : new ThreadHookChain(host, selected, () => this.toolCallStartedWaitMs);
  }
}
