import { defineHook } from 'hookgate/threads';

// Failed tool calls (and their results) are left out of what the model sees; the stored history keeps them.
export default defineHook({
  hook: 'filter_messages',
  id: 'remove_failed_tools',
  execute: async (state, rows) => {
    const failedIds = new Set(rows.filter((row) => row.role === 'tool' && row.tool_status === 'error').map((row) => row.tool_call_id));
    const removedIds = new Set();
    for (const row of rows) {
      const calls = JSON.parse(row.tool_calls || '[]');
      if (calls.some((call) => failedIds.has(call.id))) for (const call of calls) removedIds.add(call.id);
    }
    return rows.filter((row) => {
      const calls = JSON.parse(row.tool_calls || '[]');
      return !calls.some((call) => removedIds.has(call.id)) && !(row.role === 'tool' && row.tool_call_id && removedIds.has(row.tool_call_id));
    });
  },
});
