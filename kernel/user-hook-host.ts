import type { Kernel } from './kernel.js';
import type { UserHookHost } from './runtime/thread-hooks-port.js';

/**
 * The runtime's side of document 003's user scope, from a started kernel:
 * its hook bus, store, logger and agent definitions (what
 * `ThreadHooksService.openUser` needs). Throws KERNEL_NOT_STARTED before start.
 */
export function userHookHostOf(kernel: Pick<Kernel, 'hooks' | 'store' | 'logger' | 'agents'>): UserHookHost {
  return {
    bus: kernel.hooks.bus,
    store: kernel.store,
    logger: kernel.logger,
    agentDefinition: (id) => (kernel.agents.has(id) ? kernel.agents.get(id) : undefined),
  };
}
