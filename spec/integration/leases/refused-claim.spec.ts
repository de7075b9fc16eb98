import assert from 'node:assert/strict';
import { isHookgateError } from '../../../kernel/errors.js';
import type { ToolDefinition, ToolSource } from '../../../kernel/tools.js';
import { scripted, toolTurn, until, useKernelsOnOneFile } from '../../helpers/runtime-fixtures.js';

/** A tool that waits until the spec lets each call through, counting the calls that started. */
class GatedTool implements ToolSource {
  readonly id = 'gated-spec-tools';
  started = 0;
  private releases: Array<() => void> = [];
  list(): ToolDefinition[] {
    return [{ identifier: 'g', apiName: 'wait', description: 'waits for the spec', parameters: { type: 'object', properties: {}, additionalProperties: true }, toolSource: 'spec' }];
  }
  async execute(): Promise<string> {
    this.started++;
    await new Promise<void>((resolve) => this.releases.push(resolve));
    return 'let through';
  }
  releaseOne(): void {
    this.releases.shift()?.();
  }
  releaseAll(): void {
    for (const r of this.releases.splice(0)) r();
  }
}

/**
 * A long-lived process (kernel B) tries to resume an operation that another
 * process (kernel A) runs, and is refused (A holds the lease). Its attempt
 * loaded the operation; that copy must not outlive the refusal: once A moved
 * the operation on, B's abort must act on the operation as stored, the first
 * time it is asked.
 */
// Once per store both kinds of process sharing run on: one SQLite file, one PostgreSQL schema.
for (const store of ['sqlite', 'postgres'] as const) describe(`integration: a refused claim leaves no stale copy behind (${store})`, function () {
  this.timeout(30_000);
  const gates: GatedTool[] = [];
  // Let every waiting call through before the kernels stop (a failed assertion would leave one waiting): registered
  // first, so it runs before the kernels' afterEach.
  afterEach(() => gates.splice(0).forEach((g) => g.releaseAll()));
  const kernels = useKernelsOnOneFile('refused-claim', store);

  it("B's resume is refused while A runs the operation; after A moved it on, B's first abort ends it", async () => {
    const toolsA = new GatedTool();
    gates.push(toolsA);
    const a = await kernels.start(toolsA);
    const agent = { id: 'gated', tools: ['g/*'], model: scripted([toolTurn('g', 'wait'), toolTurn('g', 'wait'), { text: 'never reached' }]) };
    a.agents.define(agent);
    const handle = await a.execAgent({ agentId: 'gated', prompt: 'go' });
    await until(() => toolsA.started === 1, 10_000);

    const toolsB = new GatedTool();
    gates.push(toolsB);
    const b = await kernels.start(toolsB);
    b.agents.define(agent);
    await assert.rejects(b.resume(handle.operationId), (err) => isHookgateError(err, 'OPERATION_LEASED'));

    // A goes on: the first call's result is committed and the second call starts.
    const before = (await b.store.getOperation(handle.operationId))!.version;
    toolsA.releaseOne();
    await until(() => toolsA.started === 2, 10_000);
    assert.ok((await b.store.getOperation(handle.operationId))!.version > before, 'A committed steps after the refused claim');

    await b.abort(handle.operationId);
    assert.equal((await b.store.getOperation(handle.operationId))!.status, 'interrupted');
    toolsA.releaseAll();
    const ended = await handle.completed();
    assert.equal(ended.status, 'interrupted');
    assert.equal(toolsB.started, 0, 'B never ran a tool');
  });
});
