import { estimatedChars, type Message } from '../messages.js';

/** Per conversation array: how many of its messages were counted, and their characters. */
const counted = new WeakMap<readonly Message[], { seen: number; chars: number }>();

/**
 * `estimateTokens` of an operation's conversation, kept up to date as the
 * array grows: each call counts only the messages appended since the last
 * one, not the whole history (the compaction threshold is checked before
 * every step). A compaction replaces the array (counted afresh); a deferred
 * result that fills a placeholder in place calls `recountConversation`.
 */
export function conversationTokens(messages: readonly Message[]): number {
  let entry = counted.get(messages);
  if (entry === undefined) {
    entry = { seen: 0, chars: 0 };
    counted.set(messages, entry);
  }
  for (let i = entry.seen; i < messages.length; i++) entry.chars += estimatedChars(messages[i]!);
  entry.seen = messages.length;
  return Math.ceil(entry.chars / 4);
}

/** Forgets the running count of `messages` (a message in it changed in place). */
export function recountConversation(messages: readonly Message[]): void {
  counted.delete(messages);
}
