import assert from 'node:assert/strict';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../config/load-config.js';
import { isHookgateError } from '../../kernel/errors.js';
import { pluginsForConfig } from '../../plugins/catalog.js';

describe('loadConfig', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-config-')));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const write = (name: string, text: string) => writeFile(path.join(dir, name), text);

  /** Loads with no HOOKGATE_* variables unless given, so the developer's shell cannot change the outcome. */
  const load = (options: { file?: string; env?: NodeJS.ProcessEnv } = {}) => loadConfig({ cwd: dir, env: options.env ?? {}, file: options.file });

  function rejects(options: { file?: string; env?: NodeJS.ProcessEnv }, code: string, message: string | RegExp): void {
    assert.throws(
      () => load(options),
      (err: unknown) => {
        assert.ok(isHookgateError(err), `expected a HookgateError, got ${String(err)}`);
        assert.equal(err.code, code);
        if (typeof message === 'string') assert.equal(err.message, message);
        else assert.match(err.message, message);
        return true;
      },
    );
  }

  it('runs on embedded defaults when there is no file: SQLite and sandbox under ./.hookgate of the working directory', () => {
    const config = load();
    assert.equal(config.baseDir, dir);
    assert.equal(config.dataDir, path.join(dir, '.hookgate'));
    assert.equal(config.store.driver, 'sqlite');
    assert.equal(config.store.sqlite.path, path.join(dir, '.hookgate', 'hookgate.db'));
    assert.equal(config.sandbox.root, path.join(dir, '.hookgate', 'sandbox'));
  });

  it('selects the SQLite store and the scripted model on embedded defaults', () => {
    const ids = pluginsForConfig(load()).map((p) => p.id);
    assert.ok(ids.includes('store-sqlite'));
    assert.ok(ids.includes('model-scripted'));
    assert.ok(ids.includes('tools-builtin'));
  });

  it('reads ./hookgate.config.yaml from the working directory when present', async () => {
    await write('hookgate.config.yaml', 'store:\n  driver: memory\n');
    assert.equal(load().store.driver, 'memory');
  });

  it('fails with CONFIG_UNREADABLE naming the path when the --config file does not exist', () => {
    rejects({ file: 'missing.yaml' }, 'CONFIG_UNREADABLE', 'missing.yaml: cannot read the file (ENOENT)');
  });

  it('fails on invalid YAML with the file, line and column', async () => {
    await write('hookgate.config.yaml', 'store:\n  driver: memory\n  driver: sqlite\n');
    rejects({}, 'CONFIG_UNREADABLE', 'hookgate.config.yaml: invalid YAML at line 3, column 3: Map keys must be unique');
  });

  it('fails on a value of the wrong type with the file, the key path and what was expected', async () => {
    await write('hookgate.config.yaml', 'store:\n  sqlite:\n    path: 42\n');
    rejects({}, 'CONFIG_INVALID', 'hookgate.config.yaml: store.sqlite.path: expected string, got 42');
  });

  it('fails on an unknown key with its path, so a typo never passes silently', async () => {
    await write('hookgate.config.yaml', 'store:\n  sqlit:\n    path: x.db\n');
    rejects({}, 'CONFIG_INVALID', 'hookgate.config.yaml: store.sqlit: unknown key');
  });

  it('fails on a section that is not a mapping with "expected a mapping", not "unknown key"', async () => {
    await write('hookgate.config.yaml', 'log: 5\n');
    rejects({}, 'CONFIG_INVALID', 'hookgate.config.yaml: log: expected a mapping, got 5');
  });

  it('lists the allowed values of a choice', async () => {
    await write('hookgate.config.yaml', 'log:\n  format: fancy\n');
    rejects({}, 'CONFIG_INVALID', 'hookgate.config.yaml: log.format: expected one of "json", "pretty", got "fancy"');
  });

  it('store.driver is open: the config takes any driver name, and the catalog refuses one no plugin provides, listing those that are', async () => {
    await write('hookgate.config.yaml', 'store:\n  driver: mongodb\n');
    const config = load();
    assert.equal(config.store.driver, 'mongodb');
    assert.throws(
      () => pluginsForConfig(config),
      (err: unknown) => {
        assert.ok(isHookgateError(err));
        assert.equal(err.code, 'CONFIG_INVALID');
        assert.match(err.message, /^hookgate\.config\.yaml: store\.driver: no plugin provides the store driver "mongodb"; available: .*postgres \(store-postgres\)/);
        return true;
      },
    );
  });

  it('says "expected a number" for a non-numeric number', async () => {
    await write('hookgate.config.yaml', 'models:\n  openai:\n    timeoutSeconds: soon\n');
    rejects({}, 'CONFIG_INVALID', 'hookgate.config.yaml: models.openai.timeoutSeconds: expected a number, got "soon"');
  });

  it('reports every problem, one line each', async () => {
    await write('hookgate.config.yaml', 'dataDir: 1\nstore:\n  driver: Pg!\n');
    rejects({}, 'CONFIG_INVALID', 'hookgate.config.yaml: dataDir: expected string, got 1\nhookgate.config.yaml: store.driver: expected a store driver name (lowercase, such as sqlite or memory), got "Pg!"');
  });

  it('names the --config path as given in its errors', async () => {
    await mkdir(path.join(dir, 'conf'));
    await write('conf/custom.yaml', 'sandbox:\n  root: [a]\n');
    rejects({ file: 'conf/custom.yaml' }, 'CONFIG_INVALID', 'conf/custom.yaml: sandbox.root: expected string, got a list');
  });

  it('lets HOOKGATE_STORE__DRIVER override the file', async () => {
    await write('hookgate.config.yaml', 'store:\n  driver: sqlite\n');
    assert.equal(load({ env: { HOOKGATE_STORE__DRIVER: 'memory' } }).store.driver, 'memory');
  });

  it('maps HOOKGATE_DATA_DIR to dataDir, moving the default store and sandbox with it', () => {
    const config = load({ env: { HOOKGATE_DATA_DIR: 'state' } });
    assert.equal(config.dataDir, path.join(dir, 'state'));
    assert.equal(config.store.sqlite.path, path.join(dir, 'state', 'hookgate.db'));
    assert.equal(config.sandbox.root, path.join(dir, 'state', 'sandbox'));
  });

  it('splits a comma-separated HOOKGATE_POLICIES__PATHS into a list of paths', () => {
    assert.deepEqual(load({ env: { HOOKGATE_POLICIES__PATHS: 'a,b' } }).policies.paths, [path.join(dir, 'a'), path.join(dir, 'b')]);
  });

  it('names the environment variable when its value is invalid', () => {
    rejects({ env: { HOOKGATE_STORE__DRIVER: 'Post Gres' } }, 'CONFIG_INVALID', 'HOOKGATE_STORE__DRIVER: store.driver: expected a store driver name (lowercase, such as sqlite or memory), got "Post Gres"');
  });

  it('names an environment variable that matches no key', () => {
    rejects({ env: { HOOKGATE_STORE__DRIVR: 'memory' } }, 'CONFIG_INVALID', 'HOOKGATE_STORE__DRIVR: store.drivr: unknown key');
  });

  it('ignores HOOKGATE_DEBUG, which is a CLI switch and not a config key', () => {
    assert.equal(load({ env: { HOOKGATE_DEBUG: '1' } }).store.driver, 'sqlite');
  });

  it('ignores environment variables without the HOOKGATE_ prefix', () => {
    assert.equal(load({ env: { STORE__DRIVER: 'memory', HOOKGATESTORE: 'x' } }).store.driver, 'sqlite');
  });

  it('resolves relative paths against the config file folder, not the working directory', async () => {
    await mkdir(path.join(dir, 'conf'));
    await write('conf/hookgate.yaml', 'dataDir: data\nstore:\n  sqlite:\n    path: db/main.db\nsandbox:\n  root: ../box\npolicies:\n  paths: [packs]\n');
    const config = load({ file: 'conf/hookgate.yaml' });
    const conf = path.join(dir, 'conf');
    assert.equal(config.baseDir, conf);
    assert.equal(config.dataDir, path.join(conf, 'data'));
    assert.equal(config.store.sqlite.path, path.join(conf, 'db', 'main.db'));
    assert.equal(config.sandbox.root, path.join(dir, 'box'));
    assert.deepEqual(config.policies.paths, [path.join(conf, 'packs')]);
  });

  it('keeps absolute paths as they are', async () => {
    const abs = path.join(os.tmpdir(), 'elsewhere', 'hookgate.db');
    await write('hookgate.config.yaml', `store:\n  sqlite:\n    path: ${JSON.stringify(abs)}\n`);
    assert.equal(load().store.sqlite.path, abs);
  });

  it('treats an empty file as embedded defaults', async () => {
    await write('hookgate.config.yaml', '# nothing configured yet\n');
    assert.equal(load().store.sqlite.path, path.join(dir, '.hookgate', 'hookgate.db'));
  });

  it('rejects a file whose top level is not a mapping', async () => {
    await write('hookgate.config.yaml', '- store\n- sqlite\n');
    rejects({}, 'CONFIG_INVALID', 'hookgate.config.yaml: expected a mapping at the top level, got a list');
  });
});
