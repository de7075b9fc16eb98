import { HookgateError } from '../../kernel/errors.js';
import type { Kernel } from '../../kernel/kernel.js';
import { ThreadHooks } from '../../kernel/tokens.js';
import { userHookHostOf } from '../../kernel/user-hook-host.js';
import type { UserState } from './thread-hook-types.js';

/**
 * A user's `UserState` for code outside hooks (an HTTP handler, a script):
 * the same values the user-scope hooks read and write, and its `setValue`
 * runs the `user_value_changed` hooks agent `agentId` selects, as a hook's
 * write does. Writing through `kernel.store.setUserValue` stores the value
 * and runs no hook. Throws USER_VALUE_INVALID for a bad user id,
 * THREAD_HOOK_MISSING without the thread-hooks plugin, KERNEL_NOT_STARTED
 * before the kernel started.
 */
export function openUserState(kernel: Pick<Kernel, 'hooks' | 'store' | 'logger' | 'agents' | 'has' | 'resolve'>, options: { agentId: string; userId: string }): UserState {
  if (!kernel.has(ThreadHooks)) throw new HookgateError('THREAD_HOOK_MISSING', 'openUserState: no plugin provides thread hooks (load the thread-hooks plugin)');
  const scope = kernel.resolve(ThreadHooks).openUser(userHookHostOf(kernel), options.agentId, options.userId);
  return Object.freeze({
    userId: scope.userId,
    getValue: <T = unknown>(key: string) => scope.getValue(key) as Promise<T | undefined>,
    setValue: (key: string, value: unknown) => scope.setValue(key, value),
  });
}
