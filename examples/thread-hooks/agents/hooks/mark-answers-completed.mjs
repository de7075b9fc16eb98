import { defineHook } from 'hookgate/threads';

// Marks every stored answer of the model completed (hookgate writes a model step's message once, whole, so nothing
// else updates its status): the update that add_completion_timestamp stamps.
export default defineHook({
  hook: 'after_create_message',
  id: 'mark_answers_completed',
  execute: async (state, message) => {
    if (message.role === 'assistant') await state.updateMessage(message.id, { status: 'completed' });
  },
});
