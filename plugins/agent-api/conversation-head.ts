import type { Store } from '../../kernel/store.js';

/**
 * The position of the newest stored message of a thread (-1 when it has
 * none): the head a send admitted now reads its response after, and the
 * position a settlement recorded now follows. One operation of a thread
 * appends at a time, so the newest message is the newest operation's last
 * one (or an earlier operation's, when the newest stored none yet).
 */
export async function threadHeadPosition(store: Store, threadId: string): Promise<number> {
  const ops = await store.listThreadOperations(threadId, { last: 2 });
  for (let i = ops.length - 1; i >= 0; i--) {
    const messages = await store.listMessages(ops[i]!.id, { includeCompacted: true });
    if (messages.length > 0) return messages[messages.length - 1]!.position;
  }
  return -1;
}
