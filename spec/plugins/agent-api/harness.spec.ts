import assert from 'node:assert/strict';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as v from 'valibot';
import type { OperationRecord } from '../../../kernel/store.js';
import { HarnessClosedError, HarnessOptionsError, HarnessPromptError, ResultUnavailableError, SessionBusyError } from '../../../plugins/agent-api/agent-errors.js';
import { defineTool } from '../../../plugins/agent-api/define-tool.js';
import type { Harness } from '../../../plugins/agent-api/harness.js';
import { init } from '../../../plugins/agent-api/init.js';
import { start, type AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import { useAgentFinish, useAgentStart } from '../../../plugins/agent-api/use-agent-events.js';
import { useModel, type ModelBlock } from '../../../plugins/agent-api/use-model.js';
import { useTool } from '../../../plugins/agent-api/use-tool.js';

const USE_HARNESS = [{ toolCalls: [{ identifier: 'agent', apiName: 'work', args: {} }] }, { text: 'agent done' }];

/** A scripted model block for the harness's scratch conversation (its turns count from its own thread). */
function scratchModel(turns: unknown[], extra: Record<string, unknown> = {}): ModelBlock {
  return { provider: 'scripted', name: 'scratch', turns, ...extra };
}

function finishTurn(args: Record<string, unknown>, usage?: { promptTokens: number; completionTokens: number }): Record<string, unknown> {
  return { toolCalls: [{ identifier: 'harness', apiName: 'finish', args }], ...(usage ? { usage } : {}) };
}

/**
 * Document 001's harness, driven by real agent functions through start():
 * a `harness: true` tool (or an event callback) gets the harness; each
 * prompt is an operation of the runtime on a scratch thread of its own.
 */
describe('agent-api: the harness (harness.prompt, CallHandle, compact)', function () {
  this.timeout(60_000);
  let dir: string;
  let runtime: AgentRuntimeHandle | undefined;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-harness-')));
  });
  afterEach(async () => {
    await runtime?.stop();
    runtime = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  /** Starts a runtime whose agent `Worker` runs `work` (a harness tool) once, then answers. */
  async function withHarnessTool(work: (harness: Harness, signal: AbortSignal) => Promise<unknown>, agentModel: Record<string, unknown> = {}): Promise<{ reply: string; submissionOp: OperationRecord }> {
    function Worker(): void {
      useModel({ provider: 'scripted', turns: USE_HARNESS, ...agentModel });
      useTool(defineTool({ name: 'work', description: 'Uses the harness', harness: true, run: async ({ harness, signal }) => work(harness!, signal) }));
    }
    runtime = await start({ agents: [Worker], env: {}, config: { cwd: dir } });
    const reply = await init(Worker, { id: 'w-1' }).dispatch('go');
    const [submissionOp] = await runtime.kernel.store.listThreadOperations('agent:Worker:w-1');
    return { reply: reply.text, submissionOp: submissionOp! };
  }

  async function harnessOperations(parent: string): Promise<OperationRecord[]> {
    return (await runtime!.kernel.store.listOperations({ parentOperationId: parent })).sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  it('a prompt without result resolves the model text, usage and model; it is a child operation on a thread of its own', async () => {
    let answer: unknown;
    const { reply, submissionOp } = await withHarnessTool(async (harness) => {
      answer = await harness.prompt('summarize the ticket', { model: scratchModel([{ text: 'a short summary', usage: { promptTokens: 7, completionTokens: 3 } }], { pricing: { inputPerMillion: 1_000_000, outputPerMillion: 2_000_000 } }) });
      return 'ok';
    });
    assert.equal(reply, 'agent done');
    assert.deepEqual(answer, {
      text: 'a short summary',
      usage: { input: 7, output: 3, cacheRead: 0, cacheWrite: 0, totalTokens: 10, cost: { input: 7, output: 6, cacheRead: 0, cacheWrite: 0, total: 13 } },
      model: { provider: 'scripted', id: 'scratch' },
    });
    const [child, ...more] = await harnessOperations(submissionOp.id);
    assert.equal(more.length, 0);
    assert.equal(child!.status, 'done');
    assert.match(child!.agentId, /^Worker\.harness\.[0-9a-f]{12}$/);
    assert.notEqual(child!.threadId, submissionOp.threadId);
    // The public conversation never shows the scratch prompt.
    const publicText = (await runtime!.kernel.store.listThreadMessages(submissionOp.threadId)).map((m) => m.content).join('\n');
    assert.doesNotMatch(publicText, /summarize the ticket|a short summary/);
  });

  it("a prompt's images go with its user message: stored on the scratch thread, so the model gets them", async () => {
    const gif = 'R0lGODlhAQABAAAAACw=';
    const { submissionOp } = await withHarnessTool(async (harness) => {
      await harness.prompt('what is in the picture?', { model: scratchModel([{ text: 'a dot' }]), images: [{ type: 'image', data: gif, mimeType: 'image/GIF' }] });
      return 'ok';
    });
    const [child] = await harnessOperations(submissionOp.id);
    const users = (await runtime!.kernel.store.listThreadMessages(child!.threadId)).filter((m) => m.role === 'user');
    assert.deepEqual(users.map((m) => [m.content, m.images]), [['what is in the picture?', [{ mediaType: 'image/gif', data: gif }]]]);
  });

  it('a second prompt of the same harness continues its scratch conversation (same thread, history before the new prompt)', async () => {
    const texts: string[] = [];
    const { submissionOp } = await withHarnessTool(async (harness) => {
      const model = scratchModel([{ text: 'the code is 4711' }, { text: 'you told me 4711' }]);
      texts.push((await harness.prompt('remember the code 4711', { model })).text);
      texts.push((await harness.prompt('what was the code?', { model })).text);
      return texts;
    });
    // The scripted model plays turn 2 only when the thread's turn counter went on from the first prompt.
    assert.deepEqual(texts, ['the code is 4711', 'you told me 4711']);
    const [first, second] = await harnessOperations(submissionOp.id);
    assert.equal(first!.threadId, second!.threadId);
    const history = (await runtime!.kernel.store.listThreadMessages(first!.threadId)).map((m) => `${m.role}: ${m.content}`);
    assert.deepEqual(history, ['user: remember the code 4711', 'assistant: the code is 4711', 'user: what was the code?', 'assistant: you told me 4711']);
  });

  it('with a result schema, a valid finish call resolves its parsed data and ends the operation without another model turn', async () => {
    let answer: { data: { title: string; priority: number }; usage: { input: number } } | undefined;
    const { submissionOp } = await withHarnessTool(async (harness) => {
      // One turn only: a second model turn would fail the operation (the script has none).
      answer = await harness.prompt('classify', { result: v.object({ title: v.string(), priority: v.pipe(v.number(), v.integer()) }), model: scratchModel([finishTurn({ title: 'Login broken', priority: 1 })]) });
      return 'classified';
    });
    assert.deepEqual(answer!.data, { title: 'Login broken', priority: 1 });
    const [child] = await harnessOperations(submissionOp.id);
    assert.equal(child!.state.modelTurns, 1);
    const prompt = (await runtime!.kernel.store.listMessages(child!.id))[0]!;
    assert.match(prompt.content, /^classify\n[\s\S]*call the `finish` tool/);
  });

  it('invalid finish arguments reach the model as a tool error; its corrected call wins, usage summed over both turns', async () => {
    let answer: { data: { count: number }; usage: { input: number; output: number; totalTokens: number } } | undefined;
    const { submissionOp } = await withHarnessTool(async (harness) => {
      const result = v.object({ count: v.pipe(v.number(), v.check((n) => n % 2 === 0, 'count must be even')) });
      answer = await harness.prompt('count', {
        result,
        model: scratchModel([finishTurn({ count: 3 }, { promptTokens: 10, completionTokens: 1 }), finishTurn({ count: 4 }, { promptTokens: 20, completionTokens: 2 })]),
      });
      return 'counted';
    });
    assert.deepEqual(answer!.data, { count: 4 });
    assert.deepEqual([answer!.usage.input, answer!.usage.output, answer!.usage.totalTokens], [30, 3, 33]);
    const [child] = await harnessOperations(submissionOp.id);
    const tools = (await runtime!.kernel.store.listMessages(child!.id)).filter((m) => m.role === 'tool');
    assert.equal(tools.length, 2);
    assert.equal(tools[0]!.toolResult?.success, false);
    assert.match(tools[0]!.content, /count must be even \(at count\)/);
    assert.equal(tools[1]!.toolResult?.success, true);
  });

  it('a model that never calls finish is reminded 32 times, then the prompt rejects with ResultUnavailableError', async () => {
    let failure: unknown;
    await withHarnessTool(async (harness) => {
      failure = await harness.prompt('classify', { result: v.object({ ok: v.boolean() }), model: scratchModel([{ text: 'I think it is fine' }], { onEnd: 'repeat-last' }) }).catch((err: unknown) => err);
      return 'tried';
    });
    assert.ok(failure instanceof ResultUnavailableError, String(failure));
    assert.equal(failure.type, 'result_unavailable');
    assert.equal(failure.assistantText, 'I think it is fine');
    assert.match(failure.reason, /did not call `finish` or `give_up` after 32 follow-ups/);
  });

  it('a model that calls give_up rejects the prompt with ResultUnavailableError carrying its reason', async () => {
    let failure: unknown;
    await withHarnessTool(async (harness) => {
      failure = await harness
        .prompt('classify', { result: v.string(), model: scratchModel([{ toolCalls: [{ identifier: 'harness', apiName: 'give_up', args: { reason: 'the ticket is empty' } }] }]) })
        .catch((err: unknown) => err);
      return 'gave up';
    });
    assert.ok(failure instanceof ResultUnavailableError);
    assert.equal(failure.reason, 'the ticket is empty');
  });

  it('a non-object result schema is wrapped as { result }', async () => {
    let data: unknown;
    await withHarnessTool(async (harness) => {
      data = (await harness.prompt('pick', { result: v.picklist(['red', 'green']), model: scratchModel([finishTurn({ result: 'green' })]) })).data;
      return 'picked';
    });
    assert.equal(data, 'green');
  });

  it('options.model takes { model: "provider/model", ...options } too', async () => {
    let answer: unknown;
    await withHarnessTool(async (harness) => {
      answer = await harness.prompt('hi', { model: { model: 'scripted/named', turns: [{ text: 'from the specifier form' }] } });
      return 'ok';
    });
    assert.deepEqual([(answer as { text: string }).text, (answer as { model: unknown }).model], ['from the specifier form', { provider: 'scripted', id: 'named' }]);
  });

  it('prompt tools run inside the scratch conversation through the gate, as agent/<name>', async () => {
    const seen: string[] = [];
    let text = '';
    await withHarnessTool(async (harness) => {
      const lookup = defineTool({ name: 'lookup', description: 'Looks up', input: v.object({ key: v.string() }), run: ({ data }) => (seen.push(data.key), `value of ${data.key}`) });
      text = (await harness.prompt('look it up', { tools: [lookup], model: scratchModel([{ toolCalls: [{ identifier: 'agent', apiName: 'lookup', args: { key: 'k1' } }] }, { text: 'found it' }]) })).text;
      return text;
    });
    assert.deepEqual(seen, ['k1']);
    assert.equal(text, 'found it');
  });

  it('a policy denying a prompt tool keeps it from running; the scratch model sees the denial (the gate applies)', async () => {
    const packs = path.join(dir, 'packs');
    await mkdir(packs, { recursive: true });
    await writeFile(path.join(packs, 'lookups.yaml'), `name: lookups\npolicies:\n  - id: no-lookups\n    events: [beforeToolCall]\n    match: '^agent/lookup$'\n    effect: deny\n    reason: lookups are off\n`);
    let ran = 0;
    function Worker(): void {
      useModel({ provider: 'scripted', turns: USE_HARNESS });
      useTool(
        defineTool({
          name: 'work',
          description: 'Uses the harness',
          harness: true,
          run: async ({ harness }) => {
            const lookup = defineTool({ name: 'lookup', description: 'Looks up', run: () => void ran++ });
            return (await harness!.prompt('look', { tools: [lookup], model: scratchModel([{ toolCalls: [{ identifier: 'agent', apiName: 'lookup', args: {} }] }, { text: 'could not' }]) })).text;
          },
        }),
      );
    }
    runtime = await start({ agents: [Worker], env: { HOOKGATE_POLICIES__PATHS: packs }, config: { cwd: dir } });
    await init(Worker, { id: 'w-1' }).dispatch('go');
    assert.equal(ran, 0);
    const [submissionOp] = await runtime.kernel.store.listThreadOperations('agent:Worker:w-1');
    const [child] = await harnessOperations(submissionOp!.id);
    const tool = (await runtime.kernel.store.listMessages(child!.id)).find((m) => m.role === 'tool')!;
    assert.equal(tool.toolResult?.error, 'hook_denied');
    assert.match(tool.content, /lookups are off/);
  });

  it('handle.abort() rejects the awaited value with an AbortError and interrupts the operation; the harness is usable again', async () => {
    let failure: unknown;
    let after = '';
    let signalSeen = false;
    const { submissionOp } = await withHarnessTool(async (harness) => {
      const handle = harness.prompt('take your time', { model: scratchModel([{ text: 'slow', delayMs: 30_000 }, { text: 'quick' }]) });
      handle.signal.addEventListener('abort', () => (signalSeen = true));
      setImmediate(() => handle.abort('changed my mind'));
      failure = await handle.catch((err: unknown) => err);
      // The aborted operation is over once the handle's call released the harness; a later prompt runs.
      for (;;) {
        try {
          after = (await harness.prompt('again', { model: scratchModel([{ text: 'answered again' }]) })).text;
          break;
        } catch (err) {
          if (!(err instanceof SessionBusyError)) throw err;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
      return 'ok';
    });
    assert.ok(failure instanceof DOMException, String(failure));
    assert.equal(failure.name, 'AbortError');
    assert.equal((failure as unknown as { cause?: unknown }).cause, 'changed my mind');
    assert.equal(signalSeen, true);
    const [aborted, second] = await harnessOperations(submissionOp.id);
    assert.equal(aborted!.status, 'interrupted');
    assert.equal(second!.status, 'done');
    // The interrupted turn committed nothing: the next prompt plays the script's first turn.
    assert.equal(after, 'answered again');
  });

  it('aborting the calling operation interrupts its harness prompt, which rejects with an AbortError', async () => {
    let failure: unknown;
    function Worker(): void {
      useModel({ provider: 'scripted', turns: USE_HARNESS });
      useTool(
        defineTool({
          name: 'work',
          description: 'Uses the harness',
          harness: true,
          run: async ({ harness }) => {
            failure = await harness!.prompt('slow', { model: scratchModel([{ text: 'slow', delayMs: 30_000 }]) }).catch((err: unknown) => err);
            return 'ok';
          },
        }),
      );
    }
    runtime = await start({ agents: [Worker], env: {}, config: { cwd: dir } });
    const sent = init(Worker, { id: 'w-1' }).dispatch('go').catch((err: unknown) => err);
    let child: OperationRecord | undefined;
    for (let i = 0; i < 200 && child === undefined; i++) {
      child = (await runtime.kernel.store.listOperations({})).find((o) => o.agentId.includes('.harness.'));
      if (child === undefined) await new Promise((r) => setTimeout(r, 25));
    }
    assert.ok(child?.parentOperationId, 'the prompt started as a child operation');
    await runtime.kernel.abort(child.parentOperationId);
    await sent;
    for (let i = 0; i < 200 && failure === undefined; i++) await new Promise((r) => setTimeout(r, 25));
    assert.ok(failure instanceof DOMException, String(failure));
    assert.equal(failure.name, 'AbortError');
    assert.equal((await runtime.kernel.store.getOperation(child.id))?.status, 'interrupted');
  });

  it('an options.signal that aborts rejects the prompt with an AbortError too', async () => {
    let failure: unknown;
    await withHarnessTool(async (harness) => {
      const controller = new AbortController();
      const handle = harness.prompt('wait', { signal: controller.signal, model: scratchModel([{ text: 'slow', delayMs: 30_000 }]) });
      setImmediate(() => controller.abort());
      failure = await handle.catch((err: unknown) => err);
      return 'ok';
    });
    assert.ok(failure instanceof DOMException);
    assert.equal(failure.name, 'AbortError');
  });

  it('compact() and a second prompt while a prompt runs reject with SessionBusyError', async () => {
    const failures: unknown[] = [];
    await withHarnessTool(async (harness) => {
      const handle = harness.prompt('long', { model: scratchModel([{ text: 'slow', delayMs: 30_000 }]) });
      failures.push(await harness.compact().catch((err: unknown) => err));
      failures.push(await harness.prompt('another', { model: scratchModel([{ text: 'x' }]) }).catch((err: unknown) => err));
      handle.abort();
      await handle.catch(() => undefined);
      return 'ok';
    });
    for (const failure of failures) {
      assert.ok(failure instanceof SessionBusyError, String(failure));
      assert.equal(failure.code, 'SESSION_BUSY');
      assert.equal(failure.status, 409);
    }
  });

  it('compact() summarizes the scratch conversation with the agent model (a no-op before any prompt); the next prompt sees the summary', async () => {
    let afterText = '';
    const { submissionOp } = await withHarnessTool(
      async (harness) => {
        await harness.compact(); // nothing yet: no operation
        const model = scratchModel([{ text: 'one' }, { text: 'two' }, { text: 'three' }]);
        await harness.prompt('first', { model });
        await harness.prompt('second', { model });
        await harness.compact();
        afterText = (await harness.prompt('third', { model })).text;
        return 'ok';
      },
      { summaries: [{ text: 'SUMMARY: said one and two' }] },
    );
    const ops = await harnessOperations(submissionOp.id);
    assert.equal(ops.length, 4, 'two prompts, one compaction, one prompt');
    assert.equal(ops[2]!.state.compactions, 1);
    assert.deepEqual([ops[2]!.status, ops[2]!.reason, ops[2]!.state.stepIndex], ['done', 'done', 1], 'the compaction ends as done after its one step, not at its step limit');
    const active = (await runtime!.kernel.store.listThreadMessages(ops[0]!.threadId)).map((m) => `${m.role}: ${m.content}`);
    assert.deepEqual(active, ['summary: SUMMARY: said one and two', 'user: third', 'assistant: three']);
    assert.equal(afterText, 'three');
  });

  it('compact() rejects with HarnessPromptError when the summarization fails; the conversation stays whole', async () => {
    let failure: unknown;
    const { submissionOp } = await withHarnessTool(
      async (harness) => {
        await harness.prompt('first', { model: scratchModel([{ text: 'one' }]) });
        failure = await harness.compact().catch((err: unknown) => err);
        return 'ok';
      },
      { summaries: [{ error: 'summarizer down' }] },
    );
    assert.ok(failure instanceof HarnessPromptError, String(failure));
    assert.match(failure.message, /summarization failed/);
    const [first, compaction] = await harnessOperations(submissionOp.id);
    assert.equal(compaction!.reason, 'max_steps', 'a failed summarization is not reported as a finished compaction');
    const active = (await runtime!.kernel.store.listThreadMessages(first!.threadId)).map((m) => m.role);
    assert.ok(!active.includes('summary'));
    assert.ok(active.length >= 2);
  });

  it('useAgentStart and useAgentFinish callbacks get a harness of their own', async () => {
    const texts: string[] = [];
    function Hooked(): void {
      useModel({ provider: 'scripted', turns: [{ text: 'agent answer' }] });
      useAgentStart(async ({ harness }) => {
        texts.push((await harness!.prompt('prepare', { model: scratchModel([{ text: 'prepared' }]) })).text);
      });
      useAgentFinish(async ({ harness }) => {
        texts.push((await harness!.prompt('review', { model: scratchModel([{ text: 'reviewed' }]) })).text);
      });
    }
    runtime = await start({ agents: [Hooked], env: {}, config: { cwd: dir } });
    assert.equal((await init(Hooked, { id: 'h-1' }).dispatch('go')).text, 'agent answer');
    assert.deepEqual(texts, ['prepared', 'reviewed']);
    const [op] = await runtime.kernel.store.listThreadOperations('agent:Hooked:h-1');
    const children = await runtime.kernel.store.listOperations({ parentOperationId: op!.id });
    assert.equal(children.length, 2);
    assert.equal(new Set(children.map((c) => c.threadId)).size, 2, 'each callback had its own harness');
  });

  it('the sandbox of a harness tool writes (creating parents), reads, lists and runs commands in the sandbox folder', async () => {
    let seen: unknown;
    await withHarnessTool(async (harness) => {
      const sandbox = harness.sandbox;
      await sandbox.writeFile('notes/day/one.txt', 'hello');
      const read = await sandbox.readFile('notes/day/one.txt');
      const listed = await sandbox.readdir('notes');
      const ran = await sandbox.exec('cat notes/day/one.txt; echo; pwd');
      seen = { read, listed, stdout: ran.stdout, exitCode: ran.exitCode, cwd: sandbox.cwd };
      return 'ok';
    });
    const s = seen as { read: string; listed: string[]; stdout: string; exitCode: number; cwd: string };
    assert.equal(s.read, 'hello');
    assert.deepEqual(s.listed, ['day']);
    assert.equal(s.exitCode, 0);
    assert.equal(s.stdout, `hello\n${s.cwd}\n`);
    assert.equal(s.cwd, path.join(dir, '.hookgate', 'sandbox'));
  });

  it('bad prompt options are refused with HarnessOptionsError naming the option; nothing runs', async () => {
    const failures: unknown[] = [];
    const { submissionOp } = await withHarnessTool(async (harness) => {
      const model = scratchModel([{ text: 'x' }]);
      const bad: unknown[] = [
        [42, { model }],
        ['t', { model, result: { type: 'object' } }],
        ['t', { model, tools: [{ name: 'bad name', description: 'd', run: () => 1 }] }],
        ['t', { model, images: [{ type: 'image', data: 'not base64!', mimeType: 'image/png' }] }],
        ['t', { model, temperature: 2 }],
        ['t', { model: 'no-slash' }],
        ['t', { model, signal: { aborted: false } }],
        ['t', { model: { model: 'scripted/x', provider: 'other' } }],
      ];
      for (const [text, options] of bad as [string, object][]) failures.push(await (harness.prompt as (t: unknown, o: unknown) => Promise<unknown>)(text, options).catch((err: unknown) => err));
      return 'ok';
    });
    assert.deepEqual(
      failures.map((f) => (f instanceof HarnessOptionsError ? f.details.field : String(f))),
      ['text', 'result', 'tools[0]', 'images[0].data', 'temperature', 'model', 'signal', 'model.model'],
    );
    assert.equal((await harnessOperations(submissionOp.id)).length, 0);
  });

  it('attack: a scratch model calling finish without a result schema, or the agent\'s own tools, is refused at the gate', async () => {
    let text = '';
    let workRuns = 0;
    const { submissionOp } = await withHarnessTool(async (harness) => {
      workRuns++;
      const model = scratchModel([
        { toolCalls: [{ identifier: 'harness', apiName: 'finish', args: { x: 1 } }, { identifier: 'agent', apiName: 'work', args: {} }, { identifier: 'fs', apiName: 'readFile', args: { path: '/etc/passwd' } }] },
        { text: 'nothing worked' },
      ]);
      text = (await harness.prompt('try things', { model })).text;
      return 'ok';
    });
    assert.equal(text, 'nothing worked');
    assert.equal(workRuns, 1, 'the agent tool did not run inside the scratch conversation');
    const [child] = await harnessOperations(submissionOp.id);
    const refused = (await runtime!.kernel.store.listMessages(child!.id)).filter((m) => m.role === 'tool').map((m) => m.toolResult?.error);
    assert.deepEqual(refused, ['tool_not_allowed', 'tool_not_allowed', 'tool_not_allowed']);
  });

  it('attack: two finish calls in one turn: the first accepted one wins, the second is told the task is over', async () => {
    let data: unknown;
    const { submissionOp } = await withHarnessTool(async (harness) => {
      const model = scratchModel([{ toolCalls: [{ identifier: 'harness', apiName: 'finish', args: { n: 1 } }, { identifier: 'harness', apiName: 'finish', args: { n: 2 } }] }]);
      data = (await harness.prompt('count', { result: v.object({ n: v.number() }), model })).data;
      return 'ok';
    });
    assert.deepEqual(data, { n: 1 });
    const [child] = await harnessOperations(submissionOp.id);
    const tools = (await runtime!.kernel.store.listMessages(child!.id)).filter((m) => m.role === 'tool');
    assert.match(tools[1]!.content, /already submitted/);
  });

  it('a prompt runs for the calling operation\'s user', async () => {
    function Worker(): void {
      useModel({ provider: 'scripted', turns: USE_HARNESS });
      useTool(defineTool({ name: 'work', description: 'Uses the harness', harness: true, run: async ({ harness }) => (await harness!.prompt('hi', { model: scratchModel([{ text: 'hello' }]) })).text }));
    }
    runtime = await start({ agents: [Worker], env: {}, config: { cwd: dir } });
    const handle = await runtime.kernel.execAgent({ agentSource: 'agent-functions', agentId: 'Worker', prompt: 'go', userId: 'user-7' });
    assert.equal((await handle.completed()).status, 'done');
    const [child] = await harnessOperations(handle.operationId);
    assert.equal(child!.userId, 'user-7');
  });

  it('a harness kept past its tool call is closed: later prompts reject with HarnessClosedError', async () => {
    let kept: Harness | undefined;
    await withHarnessTool(async (harness) => {
      kept = harness;
      return 'ok';
    });
    await assert.rejects(kept!.prompt('late', { model: scratchModel([{ text: 'x' }]) }), (err: unknown) => err instanceof HarnessClosedError && err.code === 'HARNESS_CLOSED');
    await assert.rejects(kept!.compact(), HarnessClosedError);
  });

  it('a harness tool run without an agent session (no harness) fails instead of running', async () => {
    const { runAgentTool } = await import('../../../plugins/agent-api/define-tool.js');
    const tool = defineTool({ name: 'needs_harness', description: 'd', harness: true, run: () => 'ran' });
    await assert.rejects(runAgentTool(tool, {}, 'call-1', new AbortController().signal), /runs only inside an agent session/);
    assert.throws(() => defineTool({ name: 'x', description: 'd', harness: 'yes' as unknown as boolean, run: () => 1 }), /harness must be a boolean/);
  });
});
