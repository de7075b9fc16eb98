import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, realpath, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Agent } from '../../../plugins/agent-api/agent.js';
import { defineTool } from '../../../plugins/agent-api/define-tool.js';
import { init } from '../../../plugins/agent-api/init.js';
import { start, type AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { useSandbox } from '../../../plugins/agent-api/use-sandbox.js';
import { useTool } from '../../../plugins/agent-api/use-tool.js';
import { localSandbox } from '../../../plugins/sandbox-local/local-sandbox-factory.js';
import { agentToolTurn } from './agent-api-fixtures.js';

/**
 * Attack (review): an agent function mounts `localSandbox(root)` on a folder
 * that is or contains hookgate's own state. With the SQLite file inside its
 * files, the agent's shell or file verbs could rewrite stored approvals,
 * decisions and operations. The config's `sandbox.root` was always judged
 * against these folders; a sandbox made in code was not. Now the first render
 * that declares it fails with the reason, before any model call or tool, and
 * nothing in the data folder changes.
 */
describe('agent-api attack: a localSandbox over hookgate own state', function () {
  this.timeout(30_000);
  let dir: string;
  let runtime: AgentRuntimeHandle | undefined;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-host-root-')));
  });
  afterEach(async () => {
    await runtime?.stop();
    runtime = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  /** An agent whose `writer` tool writes `planted.txt` into its sandbox, over the root `root()` names when it renders. */
  function agentOver(root: () => string): { agent: Agent; wrote: string[] } {
    const wrote: string[] = [];
    function Planter(): void {
      useModel({ provider: 'scripted', turns: [agentToolTurn('writer'), { text: 'done' }] });
      useSandbox(localSandbox(root()));
      useTool(
        defineTool({
          name: 'writer',
          description: 'Writes a file into the sandbox',
          harness: true,
          run: async ({ harness }) => {
            await harness!.sandbox.writeFile('planted.txt', 'x');
            wrote.push(harness!.sandbox.cwd);
            return 'written';
          },
        }),
      );
    }
    return { agent: Planter as Agent, wrote };
  }

  async function refused(root: () => string, reason: RegExp): Promise<void> {
    const { agent, wrote } = agentOver(root);
    runtime = await start({ agents: [agent], env: {}, db: 'config', config: { cwd: dir } });
    const dataDir = runtime.kernel.config.dataDir;
    const before = (await readdir(dataDir)).sort();
    await assert.rejects(init(agent, { id: 'p-1' }).dispatch('go'), (err: Error) => {
      assert.match(err.message, /useSandbox\(\): the sandbox's host folder/);
      assert.match(err.message, reason);
      return true;
    });
    assert.deepEqual(wrote, [], 'the tool never ran');
    const stored = await runtime.kernel.store.listThreadMessages('agent:Planter:p-1');
    assert.equal(stored.filter((m) => m.role === 'assistant' || m.role === 'tool').length, 0, 'no model turn and no tool result were stored');
    await runtime.stop();
    runtime = undefined;
    assert.deepEqual((await readdir(dataDir)).filter((f) => f.startsWith('planted')), []);
    assert.ok(before.length > 0 && (await readdir(dataDir)).every((f) => !f.includes('planted')));
  }

  it('refuses the folder the configuration is read from (it holds the data folder)', async () => {
    await refused(() => dir, /the folder the configuration is read from/);
  });

  it('refuses the data folder itself', async () => {
    await refused(() => path.join(dir, '.hookgate'), /is the data folder \(dataDir\)/);
  });

  it('refuses a symlink that leads to the data folder', async () => {
    await mkdir(path.join(dir, '.hookgate'), { recursive: true });
    await symlink(path.join(dir, '.hookgate'), path.join(dir, 'innocent'));
    await refused(() => path.join(dir, 'innocent'), /is the data folder \(dataDir\)/);
  });

  it('refuses a parent of the data folder given relatively with dot segments', async () => {
    await mkdir(path.join(dir, 'work'), { recursive: true });
    await refused(() => path.join(dir, 'work', '..'), /the folder the configuration is read from/);
  });

  it('a scratch folder of its own is fine: the tool writes there', async () => {
    const work = path.join(dir, 'work');
    const { agent, wrote } = agentOver(() => work);
    runtime = await start({ agents: [agent], env: {}, db: 'config', config: { cwd: dir } });
    const reply = await init(agent, { id: 'p-2' }).dispatch('go');
    assert.equal(reply.text, 'done');
    assert.deepEqual(wrote, [work]);
    assert.deepEqual(await readdir(work), ['planted.txt']);
  });
});
