import assert from 'node:assert/strict';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel } from '../../../index.js';
import { loadConfig } from '../../../config/load-config.js';
import type { Kernel } from '../../../kernel/kernel.js';
import { definePlugin } from '../../../kernel/plugin.js';
import { ToolSources } from '../../../kernel/tokens.js';
import type { ToolSource } from '../../../kernel/tools.js';
import { scripted, toolTurn } from '../../helpers/runtime-fixtures.js';

/** `end/stop` answers with `endsOperation`; `end/note` is an ordinary tool. */
function endingTools(ran: string[]): ToolSource {
  const params = { type: 'object', properties: {}, additionalProperties: true };
  return {
    id: 'ending-tools',
    list: () => [
      { identifier: 'end', apiName: 'stop', description: 'Ends the operation', parameters: params, toolSource: 'ending' },
      { identifier: 'end', apiName: 'note', description: 'Notes', parameters: params, toolSource: 'ending' },
    ],
    async execute(call) {
      ran.push(call.apiName);
      return call.apiName === 'stop' ? { content: 'stopping', endsOperation: true } : 'noted';
    },
  };
}

/** ToolResult.endsOperation: a tool's own successful answer ends the operation once its turn's calls are answered. */
describe('runtime: a tool result that ends the operation', () => {
  let dir: string;
  let kernel: Kernel;
  const ran: string[] = [];
  beforeEach(async () => {
    ran.length = 0;
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-ends-')));
    const tools = definePlugin({ id: 'ending-tools', provides: [ToolSources], register: (ctx) => ctx.bindValue(ToolSources, endingTools(ran)) });
    kernel = createKernel({ config: loadConfig({ cwd: dir, env: { HOOKGATE_STORE__DRIVER: 'memory' } }), plugins: [tools], env: {} });
    await kernel.start();
  });
  afterEach(async () => {
    await kernel.stop();
    await rm(dir, { recursive: true, force: true });
  });

  function define(turns: unknown[]): void {
    kernel.agents.define({ id: 'ender', tools: ['end/*'], model: scripted(turns) });
  }

  it('finishes done after the call, without another model turn; the other calls of the turn still run', async () => {
    // The script has one turn: a second model turn would fail the operation.
    define([{ text: 'on it', toolCalls: [toolTurn('end', 'stop').toolCalls as never, toolTurn('end', 'note').toolCalls as never].flat() }]);
    const final = await (await kernel.execAgent({ agentId: 'ender', prompt: 'go' })).completed();
    assert.equal(final.status, 'done');
    assert.equal(final.reason, 'done');
    assert.equal(final.state.modelTurns, 1);
    assert.deepEqual(ran, ['stop', 'note']);
    assert.equal(final.state.lastText, 'on it');
  });

  it('a call the gate denies does not end it (nothing ran): the model gets its next turn', async () => {
    await kernel.stop();
    const packs = path.join(dir, 'packs');
    await mkdir(packs);
    await writeFile(path.join(packs, 'no-stop.yaml'), `name: no-stop\npolicies:\n  - id: no-stop\n    events: [beforeToolCall]\n    match: '^end/stop$'\n    effect: deny\n    reason: not yet\n`);
    const tools = definePlugin({ id: 'ending-tools', provides: [ToolSources], register: (ctx) => ctx.bindValue(ToolSources, endingTools(ran)) });
    kernel = createKernel({ config: loadConfig({ cwd: dir, env: { HOOKGATE_STORE__DRIVER: 'memory', HOOKGATE_POLICIES__PATHS: packs } }), plugins: [tools], env: {} });
    await kernel.start();
    define([toolTurn('end', 'stop'), { text: 'after the denial' }]);
    const final = await (await kernel.execAgent({ agentId: 'ender', prompt: 'go' })).completed();
    assert.equal(final.status, 'done');
    assert.equal(final.state.modelTurns, 2);
    assert.equal(final.state.lastText, 'after the denial');
    assert.deepEqual(ran, []);
  });

  it('the next operation on the thread starts afresh (the request is not carried over)', async () => {
    define([toolTurn('end', 'stop'), { text: 'second operation answers' }]);
    const first = await (await kernel.execAgent({ agentId: 'ender', prompt: 'go' })).completed();
    const second = await (await kernel.execAgent({ agentId: 'ender', prompt: 'again', threadId: first.threadId })).completed();
    assert.equal(second.status, 'done');
    assert.equal(second.state.lastText, 'second operation answers');
  });
});
