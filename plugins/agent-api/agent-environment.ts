import { AgentRenderError } from './agent-errors.js';
import type { Sandbox } from '../../kernel/sandbox.js';
import { sandboxAt } from './sandbox-cwd.js';
import { isSandbox, type SandboxDeclaration } from './use-sandbox.js';

/** The environment a render runs in: the declared sandbox, or the runtime's default one (none without a sandbox plugin). */
export interface AgentEnvironment {
  /** Whether the render declared it with `useSandbox` (what a presence flip flips). */
  readonly declared: boolean;
  readonly sandbox: Sandbox | undefined;
  /** Its working directory (undefined: no sandbox at all). */
  readonly cwd: string | undefined;
  /** What narration compares: `default`, or the declared environment's working directory. */
  readonly key: string;
}

/**
 * The environments of one submission (an operation of the agent source).
 * The sandbox is read once per submission: the first render that declares
 * one calls its factory (with its `cwd`), and that environment stays for the
 * rest of the submission, whatever later declarations pass (a factory made
 * inline, anew each render, is not called again). What renders flip is its
 * presence: a render that declares none gets `fallback()` (the runtime's
 * default sandbox). The same object comes back while nothing flipped, so a
 * step costs a comparison.
 */
export class SubmissionEnvironments {
  private declaredEnv: AgentEnvironment | undefined;
  private defaultEnv: AgentEnvironment | undefined;

  /**
   * `unsafeHostRoot`: why a sandbox's host folder may not be an agent's files
   * (undefined: it may), judged on the first declared sandbox of the submission.
   */
  constructor(
    private readonly fallback: () => Sandbox | undefined,
    private readonly unsafeHostRoot?: (root: string) => string | undefined,
  ) {}

  /** The environment of a render's declaration (undefined: none). AgentRenderError when a factory throws or returns no sandbox, or `cwd` leaves the sandbox. */
  of(declaration: SandboxDeclaration | undefined, agentName: string): AgentEnvironment {
    if (declaration !== undefined) return (this.declaredEnv ??= environmentOf(true, made(declaration, agentName, this.unsafeHostRoot)));
    const fallback = this.fallback();
    if (this.defaultEnv === undefined || this.defaultEnv.sandbox !== fallback) this.defaultEnv = environmentOf(false, fallback);
    return this.defaultEnv;
  }
}

/** The sandbox of a declaration: its factory's (or the sandbox given), at its `cwd`. */
function made(declaration: SandboxDeclaration, agentName: string, unsafeHostRoot: ((root: string) => string | undefined) | undefined): Sandbox {
  const { factory } = declaration;
  let sandbox: unknown;
  try {
    sandbox = typeof factory === 'function' ? factory() : factory;
  } catch (err) {
    throw new AgentRenderError(`agent "${agentName}": useSandbox(): the sandbox factory threw: ${(err as Error)?.message ?? String(err)}`, { hook: 'useSandbox' });
  }
  if (!isSandbox(sandbox)) throw new AgentRenderError(`agent "${agentName}": useSandbox(): the sandbox factory returned ${sandbox === null ? 'null' : typeof sandbox}, not a sandbox (exec, the file verbs, cwd, resolvePath)`, { hook: 'useSandbox' });
  const hostRoot = sandbox.hostRoot;
  if (hostRoot !== undefined && unsafeHostRoot !== undefined) {
    const why = typeof hostRoot === 'string' ? unsafeHostRoot(hostRoot) : 'is not a path';
    if (why !== undefined) throw new AgentRenderError(`agent "${agentName}": useSandbox(): the sandbox's host folder ${JSON.stringify(String(hostRoot)).slice(0, 300)} ${why}`, { hook: 'useSandbox' });
  }
  if (declaration.cwd === undefined) return sandbox;
  try {
    return sandboxAt(sandbox, declaration.cwd);
  } catch (err) {
    throw new AgentRenderError(`agent "${agentName}": useSandbox(): options.cwd: ${(err as Error).message}`, { hook: 'useSandbox' });
  }
}

function environmentOf(declared: boolean, sandbox: Sandbox | undefined): AgentEnvironment {
  const cwd = sandbox?.cwd;
  return Object.freeze({ declared, sandbox, cwd, key: declared ? `sandbox:${cwd ?? ''}` : 'default' });
}
