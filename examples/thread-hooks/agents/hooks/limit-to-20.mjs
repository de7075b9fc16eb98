import { defineHook } from 'hookgate/threads';

// At most the 20 newest provider messages go to the model.
export default defineHook({
  hook: 'prefilter_llm_history',
  id: 'limit_to_20',
  execute: async (state, messages) => messages.slice(-20),
});
