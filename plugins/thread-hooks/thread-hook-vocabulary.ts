import { defineHookVocabulary } from '../../kernel/hooks/vocabulary.js';

/** What every logged thread hook failure starts with (document 003). */
export const THREAD_HOOK_LOG_PREFIX = '[Hooks] ✗';

/**
 * The thread hooks, declared as the `thread` vocabulary of the hook bus, in
 * the order the hooks reference lists them. `transform` hooks pass a value
 * through their handlers (`null` / `undefined` keeps it); `observe` hooks
 * are told and their return value is ignored. The error rule declared here is
 * the default; the writes that the reference lets continue (a model step's
 * message, its failed status, a tool result message) override it per call.
 */
export const THREAD_HOOK_VOCABULARY = defineHookVocabulary('thread', {
  after_thread_created: { kind: 'observe', description: 'after a thread is created, before execution starts' },
  after_subagent_created: { kind: 'observe', description: 'on the parent thread right after a subagent child thread is created' },
  after_system_message: { kind: 'transform', description: 'the rendered system message of a request; a string replaces it' },
  filter_messages: { kind: 'transform', description: 'one stable snapshot of eligible persisted history, once per model-context assembly' },
  prefilter_llm_history: {
    kind: 'transform',
    description: 'the provider messages right before a request; an error with block: true stops the step',
    onError: (error: unknown) => (isBlockingError(error) ? 'propagate' : 'keep'),
  },
  before_create_message: { kind: 'transform', onError: 'propagate', description: 'a message before it is inserted; a throw prevents the write' },
  after_create_message: { kind: 'observe', description: 'a message after it was inserted' },
  before_update_message: { kind: 'transform', onError: 'propagate', description: 'the changed fields of a message before the update; a throw prevents it' },
  after_update_message: { kind: 'observe', description: 'a message after it was updated' },
  before_store_tool_result: { kind: 'transform', description: 'a tool result before it is stored' },
  after_tool_call_success: { kind: 'transform', description: 'a successful tool result before storage; null keeps it' },
  after_tool_call_failure: { kind: 'transform', description: 'a failed tool result before storage; null keeps it' },
  tool_call_started: { kind: 'observe', description: 'a tool call as it starts to stream from the model' },
  tool_call_done: { kind: 'observe', description: 'a tool call after it executed, before the success / failure hooks' },
  user_client_attached: { kind: 'observe', description: 'user scope: a client of the user connected' },
  user_client_detached: { kind: 'observe', description: 'user scope: a client of the user disconnected' },
  user_value_changed: { kind: 'observe', description: "user scope: one of the user's values changed" },
}, { logPrefix: THREAD_HOOK_LOG_PREFIX });

/** Every thread hook name. */
export type ThreadHookName = (typeof THREAD_HOOK_VOCABULARY.names)[number];

/** The hooks that run in the user scope: they get a `UserState` and no execution context. */
export const USER_SCOPE_HOOKS: ReadonlySet<ThreadHookName> = new Set(['user_client_attached', 'user_client_detached', 'user_value_changed']);

/** Whether `error` asks `prefilter_llm_history` to stop the step (`block: true`). */
export function isBlockingError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { block?: unknown }).block === true;
}
