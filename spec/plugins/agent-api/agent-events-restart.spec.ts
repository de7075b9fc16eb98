import assert from 'node:assert/strict';
import { AGENT_FUNCTION_SOURCE_ID, type Agent } from '../../../plugins/agent-api/agent.js';
import { useAgentStart, useResponseFinish, useResponseStart } from '../../../plugins/agent-api/use-agent-events.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { hook, until, useSqliteRestart } from '../../helpers/runtime-fixtures.js';
import { addAgentFunctions, recordedModel } from './agent-api-fixtures.js';

/** The start seam commits once: a kernel that resumes the operation (SQLite file) does not run it again, and finishes with its metadata. */
describe('agent API: render event hooks across a kernel restart (SQLite)', () => {
  const restart = useSqliteRestart();

  it('useResponseStart / useAgentStart ran before the stop do not run again on resume; useResponseFinish merges over the stored metadata', async () => {
    const calls: string[] = [];
    const Resumable = () => {
      // Kernel A stops during this turn; kernel B replays it (same turn index) and finishes.
      useModel(recordedModel([{ text: 'finished', delayMs: 400 }]));
      useResponseStart(() => {
        calls.push('responseStart');
        return { startedBy: 'a' };
      });
      useAgentStart(() => void calls.push('agentStart'));
      useResponseFinish(() => {
        calls.push('responseFinish');
        return { finishedBy: 'b' };
      });
    };
    const a = await restart.first();
    addAgentFunctions(a.kernel, [Resumable as Agent]);
    let turns = 0;
    const steps = hook('beforeStep', () => void turns++);
    const handle = await a.kernel.execAgent({ agentSource: AGENT_FUNCTION_SOURCE_ID, agentId: 'Resumable', prompt: 'go', hooks: [steps] });
    await until(() => turns === 1);
    await a.kernel.stop();
    assert.deepEqual(calls, ['responseStart', 'agentStart']);

    const b = await restart.next();
    assert.deepEqual((await b.kernel.store.getOperation(handle.operationId))?.state.metadata, { startedBy: 'a' }, 'the start committed before the stop');
    addAgentFunctions(b.kernel, [Resumable as Agent]);
    const final = await (await b.kernel.resume(handle.operationId)).completed();
    assert.equal(final.status, 'done');
    assert.equal(final.state.lastText, 'finished');
    assert.deepEqual(calls, ['responseStart', 'agentStart', 'responseFinish']);
    assert.deepEqual(final.state.metadata, { startedBy: 'a', finishedBy: 'b' });
  });
});
