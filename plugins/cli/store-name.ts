import type { HookgateConfig } from '../../config/defaults.js';

/**
 * The store a command reads, as its messages name it: "the SQLite store at
 * /work/.hookgate/hookgate.db", "the memory store (empty in every new
 * process)". An id that is not found is then not a mystery: the message says
 * where hookgate looked (a different working folder or `--config` means a
 * different store).
 */
export function storeName(config: HookgateConfig): string {
  switch (config.store.driver) {
    case 'sqlite':
      return config.store.sqlite.path === ':memory:' ? 'the SQLite store in memory (empty in every new process)' : `the SQLite store at ${config.store.sqlite.path}`;
    case 'memory':
      return 'the memory store (empty in every new process)';
  }
}
