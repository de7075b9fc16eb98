import { HookgateError } from '../errors.js';
import type { ExecAgentOptions } from './exec-agent-options.js';

/**
 * Queue mode's admission check on the hooks an execAgent call gives in code
 * (document 000: handlers are not available in queue mode). Steps run in
 * `hookgate worker` processes, which never see a function handed to the
 * admitting process, so instead of skipping such hooks silently the call is
 * refused (QUEUE_HOOK_UNAVAILABLE, naming the hook) before anything is stored:
 * - a lifecycle hook with a `handler` and no `webhook` (one with both is
 *   delivered as its webhook);
 * - a thread hook given in code (`threadHooks`): workers know the hooks
 *   folder and agent functions' code hooks (they load the same folder and
 *   modules), and an id given in code cannot also be one of those (ids are
 *   unique), so a worker could never resolve it.
 * Synchronous; throws on the first such hook.
 */
export function refuseHooksWorkersLack(options: ExecAgentOptions): void {
  for (const [index, hook] of (options.hooks ?? []).entries()) {
    if (typeof hook !== 'object' || hook === null || hook.handler === undefined || hook.webhook !== undefined) continue;
    throw new HookgateError(
      'QUEUE_HOOK_UNAVAILABLE',
      `execAgent hooks[${index}] "${String(hook.id)}" (${String(hook.type)}) has a handler and no webhook: with execution: queue, steps run in hookgate worker processes, which cannot call a function given to this process; give the hook a webhook (workers deliver it), or run it embedded`,
      { details: { hookId: String(hook.id), index } },
    );
  }
  for (const [index, hook] of (options.threadHooks ?? []).entries()) {
    const id = typeof hook === 'object' && hook !== null && typeof hook.id === 'string' ? hook.id : `#${index}`;
    throw new HookgateError(
      'QUEUE_HOOK_UNAVAILABLE',
      `execAgent threadHooks[${index}] "${id}" is given in code: with execution: queue, steps run in hookgate worker processes, which know the hooks folder and the agents' own code hooks, never hooks handed to this process; put it in the hooks folder (or the agent's threadHooks) and select it by id, or run it embedded`,
      { details: { hookId: id, index } },
    );
  }
}
