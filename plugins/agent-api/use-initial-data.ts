import { requireRenderFrame } from './render-slot.js';

/**
 * The instance's `initialData` as recorded at its first contact (parsed by
 * the agent's `initialData` schema when it has one); undefined when it was
 * created without, on a bare render and in a subagent render. Synchronous;
 * AgentRenderError outside a render.
 */
export function useInitialData<T = unknown>(): T | undefined {
  const frame = requireRenderFrame('useInitialData');
  return frame.kind === 'subagent' ? undefined : (frame.input.initialData as T | undefined);
}
