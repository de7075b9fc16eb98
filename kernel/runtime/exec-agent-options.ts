import type { AgentDefinition } from '../agent-definition.js';
import type { AgentHook } from '../hooks/hook-types.js';
import type { MessageImage } from '../messages.js';
import type { ThreadHookLike } from './thread-hooks-port.js';

/** What `kernel.execAgent` takes: the agent, the prompt, hooks, and who runs it. */
export interface ExecAgentOptions {
  /** A defined agent's id, or pass `agent` inline; with `agentSource`, the agent that source resolves. */
  agentId?: string;
  agent?: AgentDefinition;
  /**
   * The agent source to read the agent from before every step (an
   * `AgentSources` plugin's or `kernel.agentSources.add`'s id); default
   * `static`: agent files, `kernel.agents.define` and inline agents.
   */
  agentSource?: string;
  prompt: string;
  /**
   * Images sent to the model with the prompt (stored with its message): base64
   * `image/*`, at most 16 of at most 14 MiB of base64 each (PROMPT_INVALID).
   * Providers that take images send them as image parts.
   */
  promptImages?: readonly MessageImage[];
  hooks?: readonly AgentHook[];
  /**
   * Thread hooks (document 003, `defineHook` from `hookgate/threads`) this
   * operation's agent has in code: each is selected as an agent hook. They
   * live in this process; the operation stores their ids, and a process that
   * resumes it must know hooks with those ids (the hooks folder, or an agent's
   * code hooks), else the operation fails with THREAD_HOOK_MISSING.
   */
  threadHooks?: readonly ThreadHookLike[];
  /**
   * The prompt's hook list (document 003 "prompt hooks"): when given, only
   * these thread hooks run (plus the hooks enabled sub-agents require); the
   * agent's own list is not used. An empty list runs none of the agent's.
   */
  promptHooks?: readonly string[];
  /** runtime.userId: wins over origin.userId. */
  userId?: string;
  origin?: { userId?: string };
  parentOperationId?: string;
  /**
   * Continue this thread: the model sees the thread's whole history (earlier
   * operations' messages, compaction summaries in place of what they replaced)
   * before the new prompt. The thread must exist (THREAD_NOT_FOUND), belong to
   * the same agent (THREAD_AGENT_MISMATCH) and have no unfinished operation
   * (THREAD_BUSY). Without it the operation gets a new thread of its own.
   */
  threadId?: string;
  /** Associations copied into tool contexts: topicId, sessionId, threadId, groupId, taskId, workspaceId, documentId. */
  context?: Record<string, string>;
}

/** A human's decision on a parked operation. */
export type HumanDecision =
  | { action: 'approve'; toolCallId?: string }
  | { action: 'reject'; toolCallId?: string; reason?: string }
  | { action: 'reject_continue'; toolCallId?: string; reason?: string };

/** Where a sub-agent operation keeps the parent's tool call id (in its stored context). */
export const PARENT_TOOL_CALL_KEY = 'hookgate.parentToolCallId';
