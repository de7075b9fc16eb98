import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadAgentFile } from '../../config/agent-file.js';
import { loadConfig } from '../../config/load-config.js';
import { isHookgateError } from '../../kernel/errors.js';
import { AgentRegistry } from '../../kernel/runtime/agent-registry.js';
import { loadPacks } from '../../policies/load-packs.js';
import { formatLoadError } from '../../policies/policy-types.js';
import { runHookgate } from '../helpers/cli-process.js';


/** Nine levels of nine aliases: 9^9 (387 million) strings once expanded. */
function billionLaughs(key: string): string {
  const names = 'abcdefghi';
  const lines = [`lol0: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]`];
  for (let i = 1; i < names.length; i++) lines.push(`lol${i}: &${names[i]} [${Array(9).fill(`*${names[i - 1]}`).join(', ')}]`);
  lines.push(`${key}: *i`);
  return lines.join('\n') + '\n';
}

const BOMB_MESSAGE = 'YAML aliases expand too much (more than 100 alias expansions): refused as a possible "billion laughs" document';

const run = runHookgate;

describe('YAML alias bombs ("billion laughs")', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-yaml-')));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('hookgate.config.yaml: refused with CONFIG_UNREADABLE naming the file', async () => {
    await writeFile(path.join(dir, 'hookgate.config.yaml'), billionLaughs('dataDir'));
    assert.throws(
      () => loadConfig({ cwd: dir, env: {} }),
      (err: unknown) => {
        assert.ok(isHookgateError(err, 'CONFIG_UNREADABLE'), `expected CONFIG_UNREADABLE, got ${String(err)}`);
        assert.equal(err.message, `hookgate.config.yaml: ${BOMB_MESSAGE}`);
        return true;
      },
    );
  });

  it('an agent file: refused with AGENT_INVALID naming the file', async () => {
    const file = path.join(dir, 'agent.yaml');
    await writeFile(file, billionLaughs('instructions'));
    const registry = new AgentRegistry();
    assert.throws(
      () => loadAgentFile(file, registry),
      (err: unknown) => {
        assert.ok(isHookgateError(err, 'AGENT_INVALID'), `expected AGENT_INVALID, got ${String(err)}`);
        assert.equal(err.message, `${file}: ${BOMB_MESSAGE}`);
        return true;
      },
    );
  });

  it('a sub-agent file listed by an agent file: refused naming the sub-agent file', async () => {
    const sub = path.join(dir, 'sub.yaml');
    await writeFile(sub, billionLaughs('instructions'));
    await writeFile(path.join(dir, 'main.yaml'), 'id: main\nmodel: { provider: scripted, turns: [ { text: hi } ] }\nsubagents: [./sub.yaml]\n');
    assert.throws(() => loadAgentFile(path.join(dir, 'main.yaml'), new AgentRegistry()), (err: unknown) => {
      assert.ok(isHookgateError(err, 'AGENT_INVALID'));
      assert.equal(err.message, `${sub}: ${BOMB_MESSAGE}`);
      return true;
    });
  });

  it('a policy pack: a load error naming the file; the other packs still load', async () => {
    const bomb = path.join(dir, 'a-bomb.yaml');
    await writeFile(bomb, billionLaughs('description') + 'policies: []\n');
    await writeFile(path.join(dir, 'b-ok.yaml'), 'policies:\n  - { id: ok, effect: deny }\n');
    const { packs, errors } = await loadPacks([dir]);
    assert.deepEqual(errors.map(formatLoadError), [`${bomb}: ${BOMB_MESSAGE}`]);
    assert.deepEqual(packs.map((p) => p.name), ['b-ok']);
  });

  it('keeps ordinary anchors and aliases working', async () => {
    await writeFile(path.join(dir, 'hookgate.config.yaml'), 'policies:\n  paths: &p [a, b]\nplugins:\n  settings:\n    demo: { paths: *p }\n');
    const config = loadConfig({ cwd: dir, env: {} });
    assert.deepEqual(config.plugins.settings, { demo: { paths: ['a', 'b'] } });
  });

  it('CLI: `hookgate run` on a bomb agent file exits 2 with the file named, and `policy check` on a bomb pack exits 2', async () => {
    await writeFile(path.join(dir, 'agent.yaml'), billionLaughs('instructions'));
    const r = await run(dir, ['run', 'agent.yaml']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /agent\.yaml: YAML aliases expand too much/);
    await writeFile(path.join(dir, 'pack.yaml'), billionLaughs('description') + 'policies: []\n');
    const c = await run(dir, ['policy', 'check', 'pack.yaml']);
    assert.equal(c.code, 2, c.stdout + c.stderr);
    assert.match(c.stdout, /pack\.yaml: YAML aliases expand too much/);
  });
});
