import assert from 'node:assert/strict';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { readStore, ROOT, runHookgate } from '../helpers/cli-process.js';

/** The example agent module, as built. */
const TRIAGE = path.join(ROOT, 'dist', 'examples', 'agent-api', 'triage-agent.js');
const AGENT_API = pathToFileURL(path.join(ROOT, 'dist', 'index.js')).href;

/** `hookgate run <module.js>`: document 001 agent functions from the command line, on the config's store. */
describe('hookgate run <agent module>', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(async () => (dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-run-module-')))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('sends the message to the instance, prints the timeline and the reply; the same --id continues the conversation and its state', async () => {
    const first = await runHookgate(dir, ['run', TRIAGE, 'Login fails with a 500', '--id', 'issue-7', '--initial-data', '{"title":"Login broken"}']);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /agent\/label \{"label":"bug"\}/);
    assert.match(first.stdout, /Labelled it a bug/);
    const uid = /instance uid (inst_\S+),/.exec(first.stdout)?.[1];
    assert.ok(uid, first.stdout);

    const second = await runHookgate(dir, ['run', TRIAGE, 'Same on staging', '--id', 'issue-7', '--json']);
    assert.equal(second.code, 0, second.stderr);
    const reply = second.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; text?: string; uid?: string }).find((e) => e.type === 'reply');
    assert.equal(reply?.text, 'Also seen on staging; labels are now bug, staging.');
    assert.equal(reply?.uid, uid);
    // Both sends are submissions of one instance thread in the config's SQLite file, its state written by the tool steps.
    const thread = await readStore(dir, (s) => s.getThread('agent:Triage:issue-7'));
    assert.deepEqual(thread?.values, { labels: ['bug', 'staging'] });
    assert.equal(thread?.uid, uid);
  });

  it('a send the agent refuses (initialData failing its schema) exits 2 naming the field, and stores no instance', async () => {
    const run = await runHookgate(dir, ['run', TRIAGE, 'hello', '--id', 'issue-8', '--initial-data', '{"title":7}']);
    assert.equal(run.code, 2, run.stdout + run.stderr);
    assert.match(run.stderr, /title/);
    assert.equal(await readStore(dir, (s) => s.getThread('agent:Triage:issue-8')), undefined);
  });

  it('a module with several agents needs --agent; a module with none, or no message, is refused with what to do', async () => {
    const two = path.join(dir, 'two.mjs');
    await writeFile(two, `import { useModel } from '${AGENT_API}';\nexport function Alpha() { useModel({ provider: 'scripted', turns: [{ text: 'alpha here' }] }); }\nexport function Beta() { useModel({ provider: 'scripted', turns: [{ text: 'beta here' }] }); }\nexport const helper = () => 1;\n`);
    const ambiguous = await runHookgate(dir, ['run', two, 'hi']);
    assert.equal(ambiguous.code, 2);
    assert.match(ambiguous.stderr, /exports 2 agents \(Alpha, Beta\): choose one with --agent <name>/);
    const beta = await runHookgate(dir, ['run', two, 'hi', '--agent', 'Beta']);
    assert.equal(beta.code, 0, beta.stderr);
    assert.match(beta.stdout, /beta here/);
    const unknown = await runHookgate(dir, ['run', two, 'hi', '--agent', 'Gamma']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /has no agent "Gamma" \(it exports Alpha, Beta\)/);
    assert.match((await runHookgate(dir, ['run', two, '--agent', 'Beta'])).stderr, /give the message to send/);

    const none = path.join(dir, 'none.mjs');
    await writeFile(none, 'export const notAnAgent = 1;\n');
    const empty = await runHookgate(dir, ['run', none, 'hi']);
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /exports no agent function/);
  });

  it('a tool call that needs approval parks the submission: exit 3 with the operation to decide', async () => {
    await writeFile(path.join(dir, 'hookgate.config.yaml'), 'policies: { paths: [policies] }\n');
    await mkdir(path.join(dir, 'policies'));
    await writeFile(
      path.join(dir, 'policies', 'ask.yaml'),
      'policies:\n  - id: ask-labels\n    events: [beforeToolCall]\n    match: "^agent/label$"\n    effect: ask\n    reason: a human labels issues\n',
    );
    const run = await runHookgate(dir, ['run', TRIAGE, 'Login fails', '--id', 'issue-9', '--initial-data', '{"title":"Login"}']);
    assert.equal(run.code, 3, run.stdout + run.stderr);
    const operationId = /operation (op_\S+) is waiting for approval/.exec(run.stdout)?.[1];
    assert.ok(operationId, run.stdout);
    assert.equal((await readStore(dir, (s) => s.getOperation(operationId)))?.status, 'waiting_approval');
  });
});
