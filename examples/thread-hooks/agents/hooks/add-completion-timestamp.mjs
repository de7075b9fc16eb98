import { defineHook } from 'hookgate/threads';

// Document 003's "Add Completion Timestamp": an update that completes a message also records when (microseconds since
// the epoch). The hook gets only the fields being changed.
export default defineHook({
  hook: 'before_update_message',
  id: 'add_completion_timestamp',
  execute: async (state, messageId, updates) => {
    if (updates.status === 'completed' && !updates.response_completed_at) {
      updates.response_completed_at = Date.now() * 1000;
    }
    return updates;
  },
});
