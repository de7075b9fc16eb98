import { defineHook } from 'hookgate/threads';

// A question the tool read from the customer's inbox becomes a user message of the thread, stored after the tool's
// result (document 003's "Add a User Message from a Tool Result"); the result itself is kept as it was.
export default defineHook({
  hook: 'after_tool_call_success',
  id: 'convert_user_input',
  execute: async (state, call, result) => {
    const args = JSON.parse(call.function.arguments || '{}');
    if (call.function.name === 'fs__readFile' && typeof args.path === 'string' && args.path.startsWith('inbox/')) {
      await state.injectMessage({ role: 'user', content: result.result || '' });
    }
    return result;
  },
});
