/**
 * `hookgate/threads`: the thread hooks vocabulary. `defineHook` for hooks
 * over the conversation itself (the system message, the history sent to the
 * model, every message write and tool result), loaded from a hooks folder or
 * passed in code; this entry's `defineTool` (with `args` and
 * `progressArgument`) is the tool shape those hooks see. The root entry
 * (`'hookgate'`) keeps the agent API's `defineTool`. Both run on one runtime.
 */
export { defineHook, isThreadHookDefinition, THREAD_HOOK_ID_PATTERN, type ThreadHookDefinition, type ThreadHookOptions } from './plugins/thread-hooks/define-hook.js';
export { defineTool, type ThreadToolDefinition, type ThreadToolOptions, type StandardSchemaV1 } from './plugins/thread-hooks/define-thread-tool.js';
export { loadHooksFolder, DEFAULT_HOOKS_FOLDER, type LoadHooksFolderOptions } from './plugins/thread-hooks/hooks-folder.js';
export { ThreadHookSet, type SourcedThreadHook } from './plugins/thread-hooks/thread-hook-set.js';
export { THREAD_HOOK_VOCABULARY, USER_SCOPE_HOOKS, isBlockingError, type ThreadHookName } from './plugins/thread-hooks/thread-hook-vocabulary.js';
export { openUserState } from './plugins/thread-hooks/open-user-state.js';
export type * from './plugins/thread-hooks/thread-hook-types.js';
