import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Message } from '../../../kernel/messages.js';
import type { Sandbox } from '../../../kernel/sandbox.js';
import { createSandboxFs } from '../../../kernel/sandbox-fs.js';
import type { Agent } from '../../../plugins/agent-api/agent.js';
import { AgentRenderError } from '../../../plugins/agent-api/agent-errors.js';
import { agentFunctionSource } from '../../../plugins/agent-api/agent-function-source.js';
import { createAgentDirectory } from '../../../plugins/agent-api/agent-identity.js';
import { baselineFor, composedInstructions } from '../../../plugins/agent-api/agent-resources.js';
import { SubmissionEnvironments } from '../../../plugins/agent-api/agent-environment.js';
import { defineSkill } from '../../../plugins/agent-api/define-skill.js';
import { defineSubagent } from '../../../plugins/agent-api/define-subagent.js';
import { defineTool } from '../../../plugins/agent-api/define-tool.js';
import { HarnessHost } from '../../../plugins/agent-api/harness.js';
import { HarnessSource } from '../../../plugins/agent-api/harness-source.js';
import { init } from '../../../plugins/agent-api/init.js';
import { renderAgent } from '../../../plugins/agent-api/render-agent.js';
import { TOOL_RESOURCES } from '../../../plugins/agent-api/resource-kinds.js';
import { narrateResources } from '../../../plugins/agent-api/resource-narration.js';
import { start, type AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { usePersistentState } from '../../../plugins/agent-api/use-persistent-state.js';
import { useSandbox } from '../../../plugins/agent-api/use-sandbox.js';
import { useSkill } from '../../../plugins/agent-api/use-skill.js';
import { useSubagent } from '../../../plugins/agent-api/use-subagent.js';
import { useTool } from '../../../plugins/agent-api/use-tool.js';
import { LocalSandbox } from '../../../plugins/sandbox-local/local-sandbox.js';
import { localSandbox } from '../../../plugins/sandbox-local/local-sandbox-factory.js';
import { startKernel, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';
import { agentToolTurn, instanceThread, recordedModel, runAgent } from './agent-api-fixtures.js';

const SIGNAL = /^<signal type="(resources|instructions|environment)"/;

function signalsIn(messages: readonly Message[]): string[] {
  return messages.filter((m) => m.role === 'user' && SIGNAL.test(m.content)).map((m) => m.content);
}

function environmentSignal(cwd: string, tools: string, skills: string[], subagents: string[]): string {
  return [
    '<signal type="environment">',
    `The environment changed. Working directory: ${cwd}`,
    'Files, processes and results from the previous environment may no longer be accessible.',
    `All available tools: ${tools}`,
    ...(skills.length > 0 ? ['Available skills:', ...skills] : ['Available skills: none']),
    ...(subagents.length > 0 ? ['Available subagents:', ...subagents] : ['Available subagents: none']),
    '</signal>',
  ].join('\n');
}

/** Document 001: `useSandbox`, the `environment` signal on a presence flip, and `harness.sandbox` as a live getter. */
describe('agent API: useSandbox and the environment signal', function () {
  this.timeout(30_000);
  let fx: RuntimeFixture | undefined;
  let runtime: AgentRuntimeHandle | undefined;
  let other: string;
  beforeEach(async () => {
    other = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-env-')));
    await mkdir(path.join(other, 'work'));
  });
  afterEach(async () => {
    await fx?.cleanup();
    fx = undefined;
    await runtime?.stop();
    runtime = undefined;
    await rm(other, { recursive: true, force: true });
  });

  /** The agent-functions source with a harness host whose default sandbox is the fixture's sandbox folder. */
  function addWithDefaultSandbox(kernel: RuntimeFixture['kernel'], agents: Agent[], sandboxRoot: string): void {
    const host = new HarnessHost(new HarnessSource());
    host.attach({ operations: kernel as never, store: kernel.store, sandbox: new LocalSandbox(createSandboxFs(sandboxRoot)) });
    kernel.agentSources.add(agentFunctionSource(createAgentDirectory(agents), kernel.store, undefined, undefined, host));
  }

  const faq = defineSkill({ name: 'faq', description: 'Answer common questions.', instructions: 'Be brief.' });
  const researcher = defineSubagent({ name: 'researcher', description: 'Digs up\nfacts.', agent: () => 'You research.' });

  it('a sandbox attached at a turn boundary is one environment signal (full snapshot, no resources deltas); detaching it is another; the system prompt stays frozen', async () => {
    let made = 0;
    const factory = () => ((made += 1), localSandbox(other)());
    const Builder = () => {
      const [attached, setAttached] = usePersistentState('attached', false);
      useModel(recordedModel([agentToolTurn('attach'), agentToolTurn('detach'), { text: 'done' }]));
      useTool({ name: 'attach', description: 'Attaches the build box', run: () => setAttached(true) });
      useTool({ name: 'detach', description: 'Detaches it', run: () => setAttached(false) });
      useSkill(faq);
      if (attached) {
        useSandbox(factory, { cwd: 'work' });
        useTool({ name: 'build', description: 'Builds', run: () => 'built' });
        useSubagent(researcher);
      }
      return 'You build things.';
    };
    fx = await startKernel();
    addWithDefaultSandbox(fx.kernel, [Builder as Agent], fx.sandbox);
    const threadId = await instanceThread(fx.kernel, 'Builder', 'b1');
    const final = await runAgent(fx.kernel, 'Builder', 'go', { threadId });
    assert.equal(final.status, 'done');
    const [first, second, third] = fx.model.requests.filter((r) => r.purpose === 'turn');
    assert.deepEqual(signalsIn(first!.messages), [], 'the first turn is the baseline');
    const attached = environmentSignal(path.join(other, 'work'), 'activate_skill, attach, build, detach, task', ['- **faq** — Answer common questions.'], ['- **researcher** — Digs up facts.']);
    assert.deepEqual(signalsIn(second!.messages), [attached], 'one full snapshot; build and researcher flipped with it and get no resources signal');
    const detached = environmentSignal(path.resolve(fx.sandbox), 'activate_skill, attach, detach', ['- **faq** — Answer common questions.'], []);
    assert.deepEqual(signalsIn(third!.messages), [attached, detached]);
    // The system prompt keeps describing the initialization-time workspace (no declared sandbox: no workspace line).
    assert.equal(second!.messages[0]!.content, first!.messages[0]!.content);
    assert.equal(third!.messages[0]!.content, first!.messages[0]!.content);
    assert.doesNotMatch(first!.messages[0]!.content, /working directory/);
    assert.equal(made, 1, 'the factory is called once per submission');
    // Stored like any other record of the conversation.
    const stored = (await fx.kernel.store.listThreadMessages(threadId)).filter((m) => m.content.startsWith('<signal type="environment">'));
    assert.equal(stored.length, 2);
  });

  it('a sandbox declared from the first render is the baseline: its workspace is in the system prompt, nothing is narrated, and a change of tools alone is a resources signal', async () => {
    const Steady = () => {
      const [more, setMore] = usePersistentState('more', false);
      useModel(recordedModel([agentToolTurn('more'), { text: 'done' }]));
      useSandbox(localSandbox(other), { cwd: 'work' });
      useTool({ name: 'more', description: 'More tools', run: () => setMore(true) });
      if (more) useTool({ name: 'extra', description: 'Extra', run: () => 1 });
      return 'Steady.';
    };
    fx = await startKernel();
    addWithDefaultSandbox(fx.kernel, [Steady as Agent], fx.sandbox);
    const threadId = await instanceThread(fx.kernel, 'Steady', 's1');
    await runAgent(fx.kernel, 'Steady', 'go', { threadId });
    const [first, second] = fx.model.requests.filter((r) => r.purpose === 'turn');
    assert.equal(first!.messages[0]!.content, `Steady.\n\nYour environment's working directory is ${path.join(other, 'work')}; relative paths resolve against it.`);
    assert.deepEqual(signalsIn(first!.messages), []);
    assert.deepEqual(signalsIn(second!.messages), ['<signal type="resources" resource="tool">\nNew tool available:\n- **extra** — Extra\nAll available tools: extra, more\n</signal>']);
  });

  it('compaction rebaselines: a snapshot of another compaction is silent, and the post-compaction prompt describes the current workspace', () => {
    const attached = renderAgent((() => (useModel(recordedModel([])), useSandbox(localSandbox(other)), 'x')) as Agent);
    const bare = renderAgent((() => (useModel(recordedModel([])), 'x')) as Agent);
    const envs = new SubmissionEnvironments(() => undefined);
    const before = narrateResources([TOOL_RESOURCES], bare, undefined, null, envs.of(undefined, 'A')).snapshot;
    const envNow = envs.of(attached.sandbox, 'A');
    assert.equal(narrateResources([TOOL_RESOURCES], attached, before, null, envNow).signals[0]!.type, 'environment');
    assert.deepEqual(narrateResources([TOOL_RESOURCES], attached, before, 'sum_1', envNow).signals, [], 'after a compaction: a silent baseline');
    const old = baselineFor(undefined, bare, 0, envs.of(undefined, 'A'));
    assert.equal(composedInstructions(attached, baselineFor(old, attached, 0, envNow)), 'x', 'no compaction: the frozen baseline');
    assert.match(composedInstructions(attached, baselineFor(old, attached, 1, envNow))!, new RegExp(`working directory is ${other.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')};`));
    // A snapshot from before useSandbox existed (no environment key) adopts the environment silently.
    const legacy = { ...before } as Record<string, unknown>;
    delete legacy.environment;
    assert.deepEqual(narrateResources([TOOL_RESOURCES], attached, legacy, null, envNow).signals, []);
  });

  it('harness.sandbox is a live getter: it follows a conditional useSandbox from the default sandbox to the declared one', async () => {
    const seen: string[] = [];
    function Swapper(): void {
      const [attached, setAttached] = usePersistentState('attached', false);
      useModel({ provider: 'scripted', turns: [agentToolTurn('probe'), agentToolTurn('attach'), agentToolTurn('probe'), { text: 'done' }] });
      if (attached) useSandbox(localSandbox(other), { cwd: 'work' });
      useTool({ name: 'attach', description: 'Attaches', run: () => setAttached(true) });
      useTool(
        defineTool({
          name: 'probe',
          description: 'Writes a file through the harness sandbox',
          harness: true,
          run: async ({ harness }) => {
            const sandbox: Sandbox = harness!.sandbox;
            await sandbox.writeFile('probe.txt', 'here');
            seen.push(sandbox.cwd);
            return (await sandbox.exec('pwd')).stdout.trim();
          },
        }),
      );
    }
    const dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-env-rt-')));
    try {
      runtime = await start({ agents: [Swapper], env: {}, config: { cwd: dir } });
      const reply = await init(Swapper, { id: 's-1' }).dispatch('go');
      assert.equal(reply.text, 'done');
      assert.deepEqual(seen, [path.join(dir, '.hookgate', 'sandbox'), path.join(other, 'work')]);
      assert.equal(await readFile(path.join(other, 'work', 'probe.txt'), 'utf8'), 'here', 'relative paths resolve against the declared cwd');
      const stored = (await runtime.kernel.store.listThreadMessages('agent:Swapper:s-1')).map((m) => m.content);
      assert.equal(stored.filter((c) => c.startsWith('<signal type="environment">')).length, 1);
    } finally {
      await runtime?.stop();
      runtime = undefined;
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('attack: a second useSandbox, a factory that is not one, a throwing factory, options that are not options, a cwd that leaves the sandbox', async () => {
    const render = (fn: () => void) => renderAgent((() => (useModel(recordedModel([])), fn())) as Agent);
    assert.throws(() => render(() => (useSandbox(localSandbox(other)), useSandbox(localSandbox(other)))), (e: unknown) => e instanceof AgentRenderError && /at most one sandbox/.test(e.message));
    assert.throws(() => render(() => useSandbox({ cwd: '/' } as never)), (e: unknown) => e instanceof AgentRenderError && /sandbox factory/.test(e.message));
    assert.throws(() => render(() => useSandbox(localSandbox(other), { cwd: 'a\0b' })), AgentRenderError);
    assert.throws(() => render(() => useSandbox(localSandbox(other), { root: '/' } as never)), (e: unknown) => e instanceof AgentRenderError && /unknown option "root"/.test(e.message));
    const envs = new SubmissionEnvironments(() => undefined);
    const escaping = render(() => useSandbox(localSandbox(other), { cwd: '../..' }));
    assert.throws(() => envs.of(escaping.sandbox, 'A'), (e: unknown) => e instanceof AgentRenderError && /options\.cwd/.test(e.message));
    const throwing = render(() => useSandbox(() => { throw new Error('no box today'); }));
    assert.throws(() => envs.of(throwing.sandbox, 'A'), (e: unknown) => e instanceof AgentRenderError && /factory threw: no box today/.test(e.message));
    const notOne = render(() => useSandbox((() => ({ exec: 1 })) as never));
    assert.throws(() => envs.of(notOne.sandbox, 'A'), (e: unknown) => e instanceof AgentRenderError && /not a sandbox/.test(e.message));
    // Through a declared cwd, an absolute path outside the sandbox is still refused by the adapter.
    const box = envs.of(render(() => useSandbox(localSandbox(other), { cwd: 'work' })).sandbox, 'A').sandbox!;
    await assert.rejects(box.readFile('/etc/passwd'), /SANDBOX_ESCAPE|outside/);
    await assert.rejects(box.readFile('../../../etc/passwd'), /SANDBOX_ESCAPE|outside/);
    assert.throws(() => box.resolvePath('../..'), /outside|escape/i);
  });
});
