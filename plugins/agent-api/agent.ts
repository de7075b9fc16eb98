import type { ThreadHookLike } from '../../kernel/runtime/thread-hooks-port.js';
import type * as v from 'valibot';

/**
 * Document 001's agent: a plain synchronous function whose render hooks
 * (`useModel`, `useTool`, `useInstruction`, ...) declare what it has, and
 * whose returned string is the start of its instruction document. The
 * runtime renders it before every model call of an instance's submission.
 */
export type AgentFunction = (props: AgentProps) => string | undefined | void;

/** What the root agent function is called with: its instance id (reading `id` on a bare render throws). */
export interface AgentProps {
  readonly id: string;
}

/** The submission retry policy (document 001 "DurabilityConfig"); absent fields take the defaults below. */
export interface DurabilityConfig {
  /** Total attempts before the submission settles failed (`SubmissionRetryExhaustedError`); positive integer, default 10. */
  maxAttempts?: number;
  /** Wall-clock ms for one submission from its first attempt's start (`SubmissionTimeoutError`); positive integer, default one hour. */
  timeoutMs?: number;
}

/** The parts of an agent's contract read without running it (document 001 "Agent statics"). */
export interface AgentStatics {
  /** The durable identity override; must match `AGENT_IDENTITY_PATTERN`. */
  agentName?: string;
  /** A valibot schema for instance-creation data, validated once at the instance's first contact. */
  initialData?: v.GenericSchema;
  /** The submission retry policy. */
  durability?: DurabilityConfig;
  /**
   * Thread hooks (document 003, `defineHook` from `hookgate/threads`) of this
   * agent: each runs on every thread of the agent (source `agent`, named by
   * the identity), registered when the runtime starts.
   */
  threadHooks?: readonly ThreadHookLike[];
}

/** The addressable unit: the function value itself, with its statics. */
export type Agent = AgentFunction & AgentStatics;

/** An entry of `start({ agents })`: an agent, or an agent with an identity override. */
export type StartAgentEntry = Agent | { agent: Agent; name?: string };

/** The id of the agent source that renders agent functions (stored with every operation that runs one). */
export const AGENT_FUNCTION_SOURCE_ID = 'agent-functions';

/** Identities: a PascalCase function name or a kebab-case override; no `:`, no leading digit. */
export const AGENT_IDENTITY_PATTERN = /^[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*$/;

/** Document 001's durability defaults. */
export const DEFAULT_DURABILITY: Required<DurabilityConfig> = Object.freeze({ maxAttempts: 10, timeoutMs: 3_600_000 });
