import { defineHook } from 'hookgate/threads';

// Every message is stored with US social security numbers masked.
export default defineHook({
  hook: 'before_create_message',
  id: 'sanitize_pii',
  execute: async (state, message) => {
    if (typeof message.content === 'string') {
      message.content = message.content.replace(/\b\d{3}-\d{2}-\d{4}\b/g, '***-**-****');
    }
    return message;
  },
});
