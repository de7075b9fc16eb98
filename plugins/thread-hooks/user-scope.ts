import { isDeepStrictEqual } from 'node:util';
import type { BusHook } from '../../kernel/hooks/bus-hook-registration.js';
import type { HookBus } from '../../kernel/hooks/hook-bus.js';
import type { UserClientInfo, UserHookHost, UserScopeCalls } from '../../kernel/runtime/thread-hooks-port.js';
import { checkUserId, checkUserValueKey } from '../../kernel/user-values.js';
import type { SelectedThreadHook } from './thread-hook-selection.js';
import type { UserClient, UserState, UserValueChange } from './thread-hook-types.js';
import { THREAD_HOOK_LOG_PREFIX, THREAD_HOOK_VOCABULARY, USER_SCOPE_HOOKS } from './thread-hook-vocabulary.js';

/**
 * How many `user_value_changed` rounds one write may set off: a change hook
 * that writes through the state it got starts another round, up to this
 * depth; past it the write is stored and no hook runs for it (logged), so a
 * hook that keeps changing values cannot loop for ever.
 */
export const MAX_USER_CHANGE_DEPTH = 8;

/** What the bus hands each user-scope handler besides its arguments. */
interface UserCall {
  readonly user: UserState;
}

/**
 * One agent's user-scope hooks on the hook bus: registered once, under the
 * scope `user-hooks:<agentId>`, in the documented run order; each handler is
 * called as `execute(user, ...args)`, with no `HookExecutionContext`
 * (document 003: user-scope hooks take no context argument).
 */
export class AgentUserHooks {
  readonly scope: string;
  readonly types: ReadonlySet<string>;

  constructor(readonly bus: HookBus, agentId: string, selected: readonly SelectedThreadHook[]) {
    this.scope = `user-hooks:${agentId}`;
    const user = selected.filter((s) => USER_SCOPE_HOOKS.has(s.definition.hook));
    this.types = new Set(user.map((s) => s.definition.hook));
    const busHooks: BusHook[] = user.map(({ definition }) => {
      const execute = definition.execute as (...args: unknown[]) => unknown;
      return { id: definition.id, type: definition.hook, handler: ((args: readonly unknown[], call: UserCall) => execute(call.user, ...args)) as BusHook['handler'] };
    });
    if (!bus.vocabularyNames().includes(THREAD_HOOK_VOCABULARY.name)) bus.addVocabulary(THREAD_HOOK_VOCABULARY);
    bus.unregister(this.scope, THREAD_HOOK_VOCABULARY.name);
    if (busHooks.length > 0) bus.register(this.scope, THREAD_HOOK_VOCABULARY.name, busHooks);
  }

  close(): void {
    this.bus.unregister(this.scope, THREAD_HOOK_VOCABULARY.name);
  }
}

/**
 * The user scope of one user for one agent's hooks (ThreadHooksService.openUser):
 * the `UserState` its hooks get, and the calls the HTTP surface makes when a
 * client of the user attaches to or detaches from a conversation stream.
 */
export class UserScope implements UserScopeCalls {
  readonly userId: string;

  constructor(private readonly host: UserHookHost, private readonly hooks: AgentUserHooks | undefined, userId: string) {
    checkUserId(userId);
    this.userId = userId;
  }

  has(hook: string): boolean {
    return this.hooks?.types.has(hook) ?? false;
  }

  clientAttached(client: UserClientInfo): Promise<void> {
    return this.observe('user_client_attached', [frozenClient(client)], 0);
  }

  clientDetached(client: UserClientInfo): Promise<void> {
    return this.observe('user_client_detached', [frozenClient(client)], 0);
  }

  async getValue(key: string): Promise<unknown> {
    checkUserValueKey(key, 'UserState.getValue: the key');
    return this.host.store.getUserValue(this.userId, key);
  }

  setValue(key: string, value: unknown): Promise<void> {
    return this.write(key, value, 0);
  }

  /** The `UserState` a hook of this scope gets: writes from a `user_value_changed` hook count one round deeper. */
  state(depth = 0): UserState {
    const scope = this;
    return Object.freeze({
      userId: this.userId,
      getValue: <T = unknown>(key: string): Promise<T | undefined> => scope.getValue(key) as Promise<T | undefined>,
      setValue: (key: string, value: unknown): Promise<void> => scope.write(key, value, depth),
    });
  }

  private async write(key: string, value: unknown, depth: number): Promise<void> {
    checkUserValueKey(key, 'UserState.setValue: the key');
    const { previous } = await this.host.store.setUserValue(this.userId, key, value);
    // What was stored, as a reader gets it back (the store accepted it, so it is JSON).
    const stored = value === undefined ? undefined : (JSON.parse(JSON.stringify(value)) as unknown);
    if (isDeepStrictEqual(stored, previous) || !this.has('user_value_changed')) return;
    if (depth >= MAX_USER_CHANGE_DEPTH) {
      this.host.logger.error(`${THREAD_HOOK_LOG_PREFIX} user_value_changed did not run: the change of "${key.slice(0, 64)}" was made ${MAX_USER_CHANGE_DEPTH} rounds deep by user_value_changed hooks (the value is stored)`, {
        hookType: 'user_value_changed',
        depth,
      });
      return;
    }
    const change: UserValueChange = deepFreeze({ key, newValue: stored, oldValue: previous });
    await this.observe('user_value_changed', [change], depth + 1);
  }

  /** Runs one observe chain: failures (and timeouts) are logged by the bus with the `[Hooks] ✗` prefix; the others run. */
  private async observe(hook: 'user_client_attached' | 'user_client_detached' | 'user_value_changed', args: readonly unknown[], depth: number): Promise<void> {
    if (this.hooks === undefined || !this.hooks.types.has(hook)) return;
    await this.hooks.bus.observe(this.hooks.scope, THREAD_HOOK_VOCABULARY.name, hook, args, { user: this.state(depth) } satisfies UserCall);
  }
}

function frozenClient(client: UserClientInfo): UserClient {
  return Object.freeze({ clientId: client.clientId, agentId: client.agentId, threadId: client.threadId, connectedAt: client.connectedAt });
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
