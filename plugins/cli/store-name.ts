import type { HookgateConfig } from '../../config/defaults.js';
import type { KernelConfig } from '../../kernel/kernel-config.js';

/**
 * The store a command reads, as its messages name it: "the SQLite store at
 * /work/.hookgate/hookgate.db", "the memory store (empty in every new
 * process)", "the postgres store" for a driver a plugin provides. An id that
 * is not found is then not a mystery: the message says where hookgate looked
 * (a different working folder or `--config` means a different store).
 * Takes a kernel's config: the one `loadConfig` built carries `store`.
 */
export function storeName(config: KernelConfig | HookgateConfig): string {
  const store = (config as Partial<HookgateConfig>).store;
  switch (store?.driver) {
    case undefined:
      return 'the store';
    case 'sqlite':
      return store!.sqlite.path === ':memory:' ? 'the SQLite store in memory (empty in every new process)' : `the SQLite store at ${store.sqlite.path}`;
    case 'memory':
      return 'the memory store (empty in every new process)';
    default:
      return `the ${store!.driver} store`;
  }
}
