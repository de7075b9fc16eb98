// One hook per lifecycle type. They print a line to stderr; with --json the
// runtime's NDJSON on stdout shows each delivery as a {"type":"hook"} event.
const types = [
  'beforeStep', 'afterStep', 'onComplete', 'onError',
  'beforeToolCall', 'afterToolCall', 'onToolCallError',
  'beforeHumanIntervention', 'afterHumanIntervention', 'onStopByHumanIntervention',
  'beforeCompact', 'afterCompact', 'onCompactError',
  'beforeCallAgent', 'afterCallAgent', 'onCallAgentError',
];

const log = (type) => (event) => process.stderr.write(`[hook] ${type} op=${event.operationId.slice(0, 11)} step=${event.stepIndex}\n`);

export default [
  ...types.map((type) => ({ id: `log-${type}`, type, handler: log(type) })),
  // A local mock: time/now never runs, the hook answers.
  { id: 'fixed-clock', type: 'beforeToolCall', matcher: '^time/now$', handler: (event) => event.mock({ content: '2026-01-01T00:00:00.000Z' }) },
];
