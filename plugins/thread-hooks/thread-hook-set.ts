import { HookgateError } from '../../kernel/errors.js';
import { defineHook, type ThreadHookDefinition } from './define-hook.js';
import type { ThreadHookName } from './thread-hook-vocabulary.js';

/** A hook and where it came from: the file a hooks folder loaded it from, or `code`. */
export interface SourcedThreadHook {
  readonly definition: ThreadHookDefinition;
  /** An absolute file path, or a label such as `code` for hooks passed in code. */
  readonly source: string;
}

/**
 * The thread hooks of one agent, by id, in their run order: the order they
 * were given (a hooks folder's files in code-point order of their relative
 * paths, then hooks passed in code, in order). Several hooks of one type run
 * in that order, each getting the previous one's output.
 */
export class ThreadHookSet {
  private readonly byId = new Map<string, SourcedThreadHook>();
  private readonly byHook = new Map<ThreadHookName, ThreadHookDefinition[]>();

  /**
   * Builds the set; THREAD_HOOK_INVALID for a hook that is not valid (naming
   * its source) and for two hooks with one id (naming both sources).
   */
  constructor(hooks: Iterable<SourcedThreadHook>) {
    for (const { definition, source } of hooks) {
      const hook = defineHook(definition as unknown, source === 'code' ? undefined : source);
      const earlier = this.byId.get(hook.id);
      if (earlier !== undefined) {
        throw new HookgateError('THREAD_HOOK_INVALID', `duplicate thread hook id "${hook.id}": defined in ${earlier.source} and in ${source} (ids are unique per agent)`, {
          details: { id: hook.id, sources: [earlier.source, source] },
        });
      }
      this.byId.set(hook.id, Object.freeze({ definition: hook, source }));
      const list = this.byHook.get(hook.hook);
      if (list === undefined) this.byHook.set(hook.hook, [hook]);
      else list.push(hook);
    }
  }

  /** The hook with this id, if any. */
  get(id: string): SourcedThreadHook | undefined {
    return this.byId.get(id);
  }

  /** Every hook id, in run order. */
  ids(): string[] {
    return [...this.byId.keys()];
  }

  /** The hooks of one type, in run order (empty when there are none). */
  forHook<H extends ThreadHookName>(hook: H): readonly ThreadHookDefinition<H>[] {
    return (this.byHook.get(hook) ?? []) as ThreadHookDefinition<H>[];
  }

  get size(): number {
    return this.byId.size;
  }
}
