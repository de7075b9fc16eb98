import assert from 'node:assert/strict';
import { cp, mkdir, mkdtemp, realpath, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { readStore, ROOT, runHookgate } from '../helpers/cli-process.js';

/**
 * examples/thread-hooks as a user runs it: the folder in a project of its own
 * (hookgate installed as its dependency: node_modules/hookgate links to this
 * checkout), `hookgate run agent.yaml`, then what the store holds.
 */
describe('example: examples/thread-hooks (hooks folder, hookgate run)', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-thread-hooks-example-')));
    await cp(path.join(ROOT, 'examples', 'thread-hooks'), dir, { recursive: true });
    await mkdir(path.join(dir, 'node_modules'));
    await symlink(ROOT, path.join(dir, 'node_modules', 'hookgate'), 'dir');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('stores the SSN masked, the inbox question as a user message after its tool result, keeps the failed call in the history, and stamps each answer completed', async () => {
    const from = Date.now() * 1000;
    const { code, stdout, stderr } = await runHookgate(dir, ['run', 'agent.yaml']);
    const to = Date.now() * 1000;
    assert.equal(code, 0, stderr);
    assert.match(stdout, /■ done after 7 steps/);
    const messages = await readStore(dir, async (store) => {
      const [op] = await store.listOperations();
      assert.ok(op);
      return store.listThreadMessages(op.threadId);
    });
    const texts = messages.map((m) => `${m.role}: ${m.content}`);
    // sanitize_pii (before_create_message): no stored message holds the number.
    assert.ok(texts.every((t) => !t.includes('123-45-6789')), texts.join('\n'));
    assert.match(texts.at(-1)!, /^assistant: .*the SSN on file is \*\*\*-\*\*-\*\*\*\*\.$/);
    // convert_user_input (after_tool_call_success + injectMessage): the question follows the read's result.
    const read = texts.indexOf('tool: Which plan am I on?');
    assert.ok(read > 0, texts.join('\n'));
    assert.equal(texts[read + 1], 'user: Which plan am I on?');
    // remove_failed_tools filters what the model sees, not what is stored: the failed read is still there.
    assert.ok(texts.some((t) => /^tool: Error: path "customers\/missing\.txt" does not exist/.test(t)), texts.join('\n'));
    // mark_answers_completed (after_create_message + updateMessage) and add_completion_timestamp (before_update_message):
    // every answer of the model is stored completed with the time it completed; no other message has either.
    const answers = messages.filter((m) => m.role === 'assistant');
    assert.equal(answers.length, 4);
    for (const answer of answers) {
      assert.equal(answer.status, 'completed');
      assert.ok(Number.isSafeInteger(answer.responseCompletedAt) && answer.responseCompletedAt! >= from && answer.responseCompletedAt! <= to, String(answer.responseCompletedAt));
    }
    assert.ok(messages.filter((m) => m.role !== 'assistant').every((m) => m.status === undefined && m.responseCompletedAt === undefined));
    const stamps = answers.map((m) => m.responseCompletedAt!);
    assert.deepEqual([...stamps].sort((a, b) => a - b), stamps, 'stamped in the order they were stored');
  });
});
