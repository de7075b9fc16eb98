import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, loadConfig } from '../../../index.js';
import type { Kernel } from '../../../kernel/kernel.js';
import type { Message } from '../../../kernel/messages.js';
import type { ModelProvider, ModelRequest, ModelResponse } from '../../../kernel/model.js';
import { definePlugin } from '../../../kernel/plugin.js';
import { ModelProviders, ToolSources } from '../../../kernel/tokens.js';
import type { ToolDefinition, ToolSource } from '../../../kernel/tools.js';
import { ScriptedModel } from '../../../plugins/model-scripted/scripted-model.js';
import { scripted, toolTurn, until } from '../../helpers/runtime-fixtures.js';

/** One model turn as the provider got it: the array object itself and what it held during the call. */
interface Seen {
  purpose: ModelRequest['purpose'];
  array: readonly Message[];
  snapshot: Array<Pick<Message, 'role' | 'content'>>;
}

/** The scripted model under `identity`, keeping every request's messages array (by reference) and a snapshot. */
class IdentityModel implements ModelProvider {
  readonly name = 'identity';
  readonly seen: Seen[] = [];
  private readonly inner = new ScriptedModel();
  complete(request: ModelRequest): Promise<ModelResponse> {
    this.seen.push({ purpose: request.purpose, array: request.messages, snapshot: request.messages.map((m) => ({ role: m.role, content: m.content })) });
    return this.inner.complete(request);
  }
  turns(): Seen[] {
    return this.seen.filter((s) => s.purpose === 'turn');
  }
}

/** `t/echo` answers at once; `t/later` answers later (deferred, kernel.completeToolCall). */
class Tools implements ToolSource {
  readonly id = 'prompt-spec-tools';
  list(): ToolDefinition[] {
    const parameters = { type: 'object', properties: {}, additionalProperties: true };
    return [
      { identifier: 't', apiName: 'echo', description: 'echo', parameters, toolSource: 'spec' },
      { identifier: 't', apiName: 'later', description: 'answers later', parameters, toolSource: 'spec' },
    ];
  }
  async execute(call: { apiName: string; args: Record<string, unknown> }): Promise<string | { deferred: true }> {
    return call.apiName === 'later' ? { deferred: true } : `echo ${JSON.stringify(call.args)}`;
  }
}

/**
 * Issue 12 item 5: what a model turn needs is built incrementally, never by
 * copying the whole history. The prompt a provider gets is one array per
 * conversation that each turn extends by what was committed since; it is
 * rebuilt only when the conversation is replaced (a compaction) or changed in
 * place (a deferred result filling its placeholder). Every turn still sees
 * exactly the conversation as stored.
 */
describe('runtime: the model prompt is built incrementally', () => {
  let dir: string;
  let kernel: Kernel;
  let model: IdentityModel;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-prompt-')));
    model = new IdentityModel();
    const plugin = definePlugin({
      id: 'prompt-spec',
      provides: [ModelProviders, ToolSources],
      register: (ctx) => {
        ctx.bindValue(ModelProviders, model);
        ctx.bindValue(ToolSources, new Tools());
      },
    });
    kernel = createKernel({ config: loadConfig({ cwd: dir, env: { HOOKGATE_STORE__DRIVER: 'memory' } }), plugins: [plugin], env: {} });
    await kernel.start();
  });
  afterEach(async () => {
    await kernel.stop();
    await rm(dir, { recursive: true, force: true });
  });

  /** system + the stored (active) conversation, as a fresh build would give it. */
  async function storedPrompt(operationId: string, instructions: string): Promise<Array<Pick<Message, 'role' | 'content'>>> {
    // One operation per thread here, so the thread's messages are the operation's (compacted ones left out).
    const active = await kernel.listMessages(operationId);
    return [{ role: 'system', content: instructions }, ...[...active.filter((m) => m.role === 'summary'), ...active.filter((m) => m.role !== 'summary')].map((m) => ({ role: m.role, content: m.content }))];
  }

  it('thirty tool calls: every turn gets the same array, extended by what was committed, equal to the stored conversation at that point', async () => {
    const turns = [...Array.from({ length: 30 }, (_, i) => toolTurn('t', 'echo', { i })), { text: 'done' }];
    kernel.agents.define({ id: 'long', instructions: 'be brief', tools: ['t/*'], model: { ...scripted(turns), provider: 'identity' }, limits: { maxSteps: 200 } });
    const final = await (await kernel.execAgent({ agentId: 'long', prompt: 'go' })).completed();
    assert.equal(final.status, 'done');

    const seen = model.turns();
    assert.equal(seen.length, 31);
    for (const turn of seen) assert.equal(turn.array, seen[0]!.array, 'one array for the whole conversation, never a copy');
    const stored = await storedPrompt(final.id, 'be brief');
    for (const [k, turn] of seen.entries()) {
      // Turn k sees system, the prompt, then k assistant + tool pairs.
      assert.equal(turn.snapshot.length, 2 + 2 * k);
      assert.deepEqual(turn.snapshot, stored.slice(0, turn.snapshot.length));
    }
  });

  it('a compaction gives the next turn a rebuilt prompt: the summary first, the kept messages, nothing compacted', async () => {
    const big = (tag: string) => ({ ...toolTurn('t', 'echo', { pad: tag.repeat(200) }) });
    kernel.agents.define({
      id: 'compacting',
      instructions: 'summarize when long',
      tools: ['t/*'],
      compaction: { thresholdTokens: 150, keepRecent: 2 },
      model: { ...scripted([big('a'), big('b'), big('c'), { text: 'done' }], { summaries: [{ text: 'SUMMARY' }] }), provider: 'identity' },
      limits: { maxSteps: 50 },
    });
    const final = await (await kernel.execAgent({ agentId: 'compacting', prompt: 'go' })).completed();
    assert.equal(final.status, 'done');
    assert.ok(final.state.compactions >= 1, 'the conversation was compacted');

    const seen = model.turns();
    const afterCompaction = seen.findIndex((t) => t.snapshot.some((m) => m.role === 'summary'));
    assert.ok(afterCompaction > 0);
    assert.notEqual(seen[afterCompaction]!.array, seen[afterCompaction - 1]!.array, 'rebuilt after the compaction replaced the conversation');
    const last = seen.at(-1)!;
    // The last turn saw everything stored but its own answer.
    assert.deepEqual([...last.snapshot, { role: 'assistant', content: 'done' }], await storedPrompt(final.id, 'summarize when long'));
    assert.equal(last.snapshot[1]!.role, 'summary', 'the summary comes right after the instructions');
    assert.ok(!last.snapshot.some((m) => m.content.includes('aaaa')), 'nothing compacted reaches the model');
  });

  it('a deferred result fills its placeholder: the next turn sees the result, not the empty placeholder it was built with', async () => {
    kernel.agents.define({ id: 'waits', instructions: 'wait for it', tools: ['t/*'], model: { ...scripted([toolTurn('t', 'echo', { n: 1 }), toolTurn('t', 'later'), { text: 'done' }]), provider: 'identity' } });
    const handle = await kernel.execAgent({ agentId: 'waits', prompt: 'go' });
    await until(async () => (await kernel.getOperation(handle.operationId))?.status === 'waiting_tool');
    const placeholder = (await kernel.listMessages(handle.operationId)).filter((m) => m.role === 'tool').at(-1)!;
    assert.equal(placeholder.content, '');
    assert.deepEqual(await kernel.completeToolCall(handle.operationId, placeholder.toolCallId!, 'THE LATE RESULT'), { published: true });
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    const last = model.turns().at(-1)!;
    assert.equal(last.snapshot.at(-1)!.content, 'THE LATE RESULT');
    assert.deepEqual([...last.snapshot, { role: 'assistant', content: 'done' }], await storedPrompt(final.id, 'wait for it'));
  });
});
