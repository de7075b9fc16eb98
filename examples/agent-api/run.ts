// A script over the agent API: start a runtime, address one issue instance, send it two messages.
// `node dist/examples/agent-api/run.js [file.db]`: with a file, the conversation survives restarts.
import { init, start } from 'hookgate';
import { Triage } from './triage-agent.js';

const file = process.argv[2];
await using _runtime = await start({ agents: [Triage], db: file ? { sqlite: file } : 'memory' });

const issue = init(Triage, { id: 'issue-42' });
const first = await issue.dispatch({ message: 'Login fails with a 500 after the update.', initialData: { title: 'Login broken' } });
console.log(`${first.text}  (instance uid ${first.uid})`);

const second = await issue.dispatch({
  message: { kind: 'signal', type: 'github.comment', body: 'Same thing on staging.', attributes: { author: 'ada' } },
});
console.log(second.text);
