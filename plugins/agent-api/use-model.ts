import { parseModelSpecifier as parseKernelModelSpecifier } from '../../kernel/model-specifier.js';
import { AgentRenderError } from './agent-errors.js';
import { agentPrefix, requireRootFrame } from './render-slot.js';

/** The model block of the agent's view: the provider plugin, the provider's model name and provider options (the agent file's `model`). */
export interface ModelBlock {
  readonly provider: string;
  readonly name?: string;
  readonly [option: string]: unknown;
}

/** `useModel`'s argument: a `'provider/model'` specifier, or a model block (`{ provider, name?, ...options }` or `{ model: 'provider/model', ...options }`). */
export type ModelChoice = string | ({ readonly model: string } & Readonly<Record<string, unknown>>) | ModelBlock;

/**
 * `'provider/model'` split at the first `/` into `{ provider, name }` by the
 * kernel's parser (the name may hold more slashes: `openrouter/meta/llama`);
 * its MODEL_SPECIFIER_INVALID becomes an AgentRenderError with the same
 * message, as every other rule of a render.
 */
export function parseModelSpecifier(specifier: string): { provider: string; name: string } {
  try {
    return parseKernelModelSpecifier(specifier);
  } catch (err) {
    throw new AgentRenderError((err as Error).message, { specifier: specifier.slice(0, 120) });
  }
}

/**
 * Declares the agent's model for this render: exactly once per render (a
 * second call throws here, none throws when the render ends). The argument
 * may change between renders. Synchronous; AgentRenderError outside a
 * render, in a subagent render, or for a malformed choice.
 */
export function useModel(choice: ModelChoice): void {
  const frame = requireRootFrame('useModel', 'a delegate runs with the model its definition names.');
  if (frame.model !== undefined) {
    throw new AgentRenderError(`${agentPrefix(frame)}useModel() was called twice in one render: an agent has one model (compute the choice first if it depends on state).`, { hook: 'useModel' });
  }
  frame.model = modelBlockOf(choice);
}

/** A model choice as the view's model block (`useModel`'s parsing, also a subagent's `model` override); AgentRenderError when malformed. */
export function modelBlockOf(choice: ModelChoice): ModelBlock {
  if (typeof choice === 'string') return Object.freeze(parseModelSpecifier(choice));
  if (choice === null || typeof choice !== 'object' || Array.isArray(choice)) {
    throw new AgentRenderError(`useModel() takes "provider/model" or a model block { provider, name?, ...options }; got ${choice === null ? 'null' : Array.isArray(choice) ? 'an array' : typeof choice}`, { hook: 'useModel' });
  }
  const { model, ...rest } = choice as Record<string, unknown>;
  if (model !== undefined) {
    if (typeof model !== 'string') throw new AgentRenderError('useModel({ model }): model must be a "provider/model" string', { hook: 'useModel' });
    if (rest.provider !== undefined || rest.name !== undefined) throw new AgentRenderError('useModel(): give either model: "provider/model" or provider and name, not both', { hook: 'useModel' });
    return Object.freeze({ ...rest, ...parseModelSpecifier(model) });
  }
  if (typeof rest.provider !== 'string' || rest.provider.trim() === '') throw new AgentRenderError('useModel({ provider }): provider must be a non-empty string', { hook: 'useModel' });
  if (rest.name !== undefined && (typeof rest.name !== 'string' || rest.name.trim() === '')) throw new AgentRenderError('useModel({ name }): name must be a non-empty string', { hook: 'useModel' });
  return Object.freeze({ ...rest }) as ModelBlock;
}
