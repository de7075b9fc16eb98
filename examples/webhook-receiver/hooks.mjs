// A control before every fs write, answered by the example receiver, and a
// notification after every tool call.
export default [
  {
    id: 'approve-writes',
    type: 'beforeToolCall',
    matcher: '^fs/writeFile$',
    webhook: { url: 'http://127.0.0.1:8787/control', responseHandling: 'toolCall', onError: 'block', timeout: 5 },
  },
  {
    id: 'audit',
    type: 'afterToolCall',
    webhook: { url: 'http://127.0.0.1:8787/audit', eventFields: ['toolCallId', 'identifier', 'apiName', 'result', 'userId', 'userEmail'] },
  },
];
