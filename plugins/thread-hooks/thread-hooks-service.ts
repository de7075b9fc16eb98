import { errorMessage } from '../../kernel/errors.js';
import type { ThreadHookCalls, ThreadHookHost, ThreadHookLike, ThreadHooksService, UserHookHost, UserScopeCalls } from '../../kernel/runtime/thread-hooks-port.js';
import { TOOL_CALL_STARTED_WAIT_MS, ThreadHookChain, prepareThreadHooks } from './thread-hook-chain.js';
import { MISS, ThreadHookSelectionCache } from './thread-hook-selection-cache.js';
import { mightSelect, selectAgentHooks, selectThreadHooks, type SelectedThreadHook } from './thread-hook-selection.js';
import { THREAD_HOOK_LOG_PREFIX } from './thread-hook-vocabulary.js';
import { AgentUserHooks, UserScope } from './user-scope.js';
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
  /** Each agent's user-scope hooks on the bus, registered at the agent's first openUser (forgotten when its hooks change). */
  private readonly userHooks = new Map<string, AgentUserHooks | undefined>();
  /** Each agent's last selection, prepared for the bus, reused by its next operations with the same one. */
  private readonly selections = new ThreadHookSelectionCache();

  /** Replaces the hooks folder's hooks (at start; a validated set). */
  setFolderHooks(hooks: readonly SourcedThreadHook[]): void {
    new ThreadHookSet(hooks);
    this.folder = Object.freeze([...hooks]);
    this.selections.forget();
    this.forgetUserHooks();
  }

  addAgentHooks(agentId: string, hooks: readonly ThreadHookLike[], source: string): void {
    const next = [...(this.agentHooks.get(agentId) ?? []), ...hooks.map((definition) => ({ definition: definition as unknown as ThreadHookDefinition, source }))];
    // Validated (and duplicates refused) before anything is kept.
    new ThreadHookSet(next);
    this.agentHooks.set(agentId, next);
    this.selections.forget(agentId);
    this.forgetUserHooks(agentId);
  }

  /**
   * The user scope of `userId` for agent `agentId` (see ThreadHooksService).
   * The agent's user-scope hooks are worked out and put on the bus once; a
   * selection that names an unknown id is logged (`[Hooks] ✗`) and the
   * agent's user-scope hooks do not run, so a client still gets its stream.
   */
  openUser(host: UserHookHost, agentId: string, userId: string): UserScopeCalls {
    let hooks = this.userHooks.get(agentId);
    // Registered on another bus (another kernel of this runtime object): registered again on this one.
    if (!this.userHooks.has(agentId) || (hooks !== undefined && hooks.bus !== host.bus)) {
      hooks = this.registerUserHooks(host, agentId);
      this.userHooks.set(agentId, hooks);
    }
    return new UserScope(host, hooks, userId);
  }

  private registerUserHooks(host: UserHookHost, agentId: string): AgentUserHooks | undefined {
    const own = this.agentHooks.get(agentId) ?? [];
    const agent = host.agentDefinition(agentId);
    let selected: SelectedThreadHook[];
    try {
      const known = new ThreadHookSet([...this.folder, ...own]);
      selected = selectAgentHooks({ agentId, agent, agentDefinition: (id) => host.agentDefinition(id), known, agentCodeIds: own.map((h) => h.definition.id) });
    } catch (err) {
      host.logger.error(`${THREAD_HOOK_LOG_PREFIX} the user-scope hooks of agent "${agentId}" cannot run`, { agentId, error: errorMessage(err) });
      return undefined;
    }
    const hooks = new AgentUserHooks(host.bus, agentId, selected);
    return hooks.types.size > 0 ? hooks : undefined;
  }

  private forgetUserHooks(agentId?: string): void {
    for (const [id, hooks] of this.userHooks) {
      if (agentId !== undefined && id !== agentId) continue;
      hooks?.close();
      this.userHooks.delete(id);
    }
  }

  open(host: ThreadHookHost): ThreadHookCalls | undefined {
    const agent = host.agent();
    const lists = { folder: this.folder, own: this.agentHooks.get(agent.id) };
    const own = lists.own ?? [];
    if (host.codeHooks.length === 0 && !mightSelect(host.record, agent, host.agentDefinition, own.length > 0)) return undefined;
    let hooks = this.selections.lookup(host, agent, lists);
    if (hooks === MISS) {
      const code = host.codeHooks.map((definition) => ({ definition: definition as unknown as ThreadHookDefinition, source: 'code' }));
      const known = new ThreadHookSet([...this.folder, ...own, ...code]);
      const selected = selectThreadHooks({ record: host.record, agent, agentDefinition: host.agentDefinition, known, agentCodeIds: own.map((h) => h.definition.id) });
      hooks = selected.length === 0 ? undefined : prepareThreadHooks(selected);
      this.selections.remember(host, agent, lists, hooks);
    }
    return hooks === undefined ? undefined : new ThreadHookChain(host, hooks, () => this.toolCallStartedWaitMs);
  }
}
