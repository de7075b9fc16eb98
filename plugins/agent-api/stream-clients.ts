import { randomUUID } from 'node:crypto';
import type { HookgateConfig } from '../../config/defaults.js';
import { nowIso } from '../../kernel/clock.js';
import { errorMessage } from '../../kernel/errors.js';
import type { Kernel } from '../../kernel/kernel.js';
import type { UserClientInfo, UserHookHost, UserScopeCalls } from '../../kernel/runtime/thread-hooks-port.js';
import { userHookHostOf } from '../../kernel/user-hook-host.js';
import { ThreadHooks } from '../../kernel/tokens.js';

/** One client of a user on a conversation stream: `detach()` says it left (idempotent). */
export interface StreamClient {
  /** Resolves once the `user_client_detached` hooks ran (after the `user_client_attached` ones finished). Never rejects. */
  detach(): Promise<void>;
}

/** What `attach` is told about a stream that opened. */
export interface StreamOpening {
  /** The agent whose conversation stream it is (an agent function's identity). */
  agentId: string;
  threadId: string;
  /** The user the host app's auth said the client belongs to; undefined: nobody's, no hooks run. */
  userId: string | undefined;
  /** Ends the stream (the server is draining). */
  close(): void;
}

const DETACHED: StreamClient = Object.freeze({ detach: async () => undefined });

interface OpenClient {
  readonly info: UserClientInfo;
  readonly close: () => void;
  detach(): Promise<void>;
}

/**
 * The clients of users on this process's conversation streams (SSE), and the
 * user-scope hooks of document 003 their coming and going runs: one
 * `user_client_attached` when a stream of a known user opens and one
 * `user_client_detached` when it ends (the client left, its socket dropped,
 * or the server drained), per connection, for the hooks the stream's agent
 * selects. The hooks run in the background of the stream (they never delay
 * or end it); a client's detached hooks start after its attached ones
 * finished. `drain()` (runtime stop) ends the open streams and waits for
 * every pending hook, so they run while the store is still open.
 */
export class StreamClients {
  private readonly open = new Set<OpenClient>();
  private readonly pending = new Set<Promise<void>>();
  private draining = false;

  constructor(private readonly kernel: Kernel<HookgateConfig>) {}

  /**
   * Registers a stream that opened and runs its user's `user_client_attached`
   * hooks (not awaited). A stream with no user, an agent that selects no
   * user-scope hook, no thread-hooks plugin, or a runtime that is stopping
   * runs nothing. Never throws: a scope that cannot be opened (a bad user
   * id the caller should have refused first) is logged and runs nothing.
   */
  attach(opening: StreamOpening): StreamClient {
    if (opening.userId === undefined || this.draining || !this.kernel.has(ThreadHooks)) return DETACHED;
    let scope: UserScopeCalls;
    try {
      scope = this.kernel.resolve(ThreadHooks).openUser(this.host(), opening.agentId, opening.userId);
    } catch (err) {
      // The stream is already answering: it goes on without the hooks rather than hang or break.
      this.kernel.logger.error('[Hooks] ✗ user_client_attached could not run', { hookType: 'user_client_attached', agentId: opening.agentId, error: errorMessage(err) });
      return DETACHED;
    }
    if (!scope.has('user_client_attached') && !scope.has('user_client_detached')) return DETACHED;
    const info: UserClientInfo = Object.freeze({ clientId: `client_${randomUUID()}`, agentId: opening.agentId, threadId: opening.threadId, connectedAt: nowIso() });
    const attached = this.track(this.guarded(scope, 'user_client_attached', () => scope.clientAttached(info)));
    let detached: Promise<void> | undefined;
    const client: OpenClient = {
      info,
      close: opening.close,
      detach: () => {
        detached ??= this.track(
          attached.then(() => this.guarded(scope, 'user_client_detached', () => scope.clientDetached(info))).finally(() => this.open.delete(client)),
        );
        return detached;
      },
    };
    this.open.add(client);
    return client;
  }

  /**
   * Ends every open stream, runs their `user_client_detached` hooks and waits
   * for every pending user-scope hook; later streams run no hooks. Called
   * by the runtime's stop after the feed closed and before the kernel stops.
   */
  async drain(): Promise<void> {
    this.draining = true;
    for (const client of [...this.open]) {
      client.close();
      void client.detach();
    }
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** How many streams of users are open (for specs and operators). */
  get size(): number {
    return this.open.size;
  }

  private host(): UserHookHost {
    return userHookHostOf(this.kernel);
  }

  /** The hooks never reject (the bus logs a failing one); this catches what is left, such as a store that went away. */
  private guarded(_scope: UserScopeCalls, hook: string, run: () => Promise<void>): Promise<void> {
    return run().catch((err: unknown) => this.kernel.logger.error(`[Hooks] ✗ ${hook} could not run`, { hookType: hook, error: errorMessage(err) }));
  }

  private track(promise: Promise<void>): Promise<void> {
    this.pending.add(promise);
    void promise.finally(() => this.pending.delete(promise));
    return promise;
  }
}
