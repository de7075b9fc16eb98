import { AgentRenderError } from './agent-errors.js';
import type { Sandbox, SandboxFactory } from '../../kernel/sandbox.js';
import { agentPrefix, requireRenderFrame } from './render-slot.js';

/** `useSandbox` options. */
export interface UseSandboxOptions {
  /** The working directory relative paths resolve against: absolute, or relative to the sandbox's own; must stay inside it. */
  readonly cwd?: string;
}

/** What a render declared with `useSandbox`: the factory (or sandbox) and the working directory asked for. */
export interface SandboxDeclaration {
  readonly factory: SandboxFactory | Sandbox;
  readonly cwd: string | undefined;
}

const VERBS = ['exec', 'readFile', 'readFileBuffer', 'writeFile', 'stat', 'readdir', 'exists', 'mkdir', 'rm', 'resolvePath'] as const;

/**
 * Mounts the agent's environment for this render: `factory` is a
 * `SandboxFactory` (called once per submission, the first time a render
 * declares it) or a sandbox itself (for example the `Sandbox` of
 * `localSandbox(root)`). `harness.sandbox` is then that environment, with
 * relative paths against `options.cwd` when given. Declared conditionally,
 * the environment swaps at the next turn boundary and the model gets an
 * `environment` signal. At most once per render; synchronous;
 * AgentRenderError outside a render, for a second call, a factory that is
 * neither, or a `cwd` that is not a non-empty string without NUL bytes.
 */
export function useSandbox(factory: SandboxFactory | Sandbox, options?: UseSandboxOptions): void {
  const frame = requireRenderFrame('useSandbox');
  const fail = (why: string): never => {
    throw new AgentRenderError(`${agentPrefix(frame)}useSandbox(): ${why}`, { hook: 'useSandbox' });
  };
  if (frame.sandbox !== undefined) fail('called twice in one render: an agent declares at most one sandbox per render');
  if (typeof factory !== 'function' && !isSandbox(factory)) fail('takes a sandbox factory (a function returning a sandbox) or a sandbox (exec, the file verbs, cwd, resolvePath)');
  if (options !== undefined && (options === null || typeof options !== 'object' || Array.isArray(options))) fail('options must be an object { cwd? }');
  const cwd = options?.cwd;
  if (cwd !== undefined && (typeof cwd !== 'string' || cwd.trim() === '' || cwd.includes('\0'))) fail('options.cwd must be a non-empty path without NUL bytes');
  const unknown = options !== undefined ? Object.keys(options).filter((k) => k !== 'cwd') : [];
  if (unknown.length > 0) fail(`unknown option ${JSON.stringify(unknown[0]).slice(0, 80)} (known: cwd)`);
  frame.sandbox = Object.freeze({ factory, cwd });
}

/** Whether `value` carries the whole `Sandbox` surface (what a factory must return too). */
export function isSandbox(value: unknown): value is Sandbox {
  if (value === null || typeof value !== 'object') return false;
  const s = value as Record<string, unknown>;
  return VERBS.every((verb) => typeof s[verb] === 'function') && typeof s.cwd === 'string';
}
