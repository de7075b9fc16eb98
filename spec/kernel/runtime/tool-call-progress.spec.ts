import assert from 'node:assert/strict';
import { PROGRESS_SCAN_LIMIT, scanProgressArgument } from '../../../kernel/runtime/tool-call-progress.js';

/** The progress string of a tool call's arguments text (document 003's progressArgument and its 8,192-character scan). */
describe('tool call progress scan', () => {
  it('reads a complete first argument from a fragment: the rest may still be streaming', () => {
    assert.deepEqual(scanProgressArgument('{"description": "writing index.html", "path": "ind', 'description'), { progress: 'writing index.html', foundIn: 'streamed' });
  });

  it('an argument still streaming is not read (no half value), and no argument yet is undefined', () => {
    assert.deepEqual(scanProgressArgument('{"description": "writing ind', 'description'), { progress: undefined, foundIn: 'none' });
    assert.deepEqual(scanProgressArgument('', 'description'), { progress: undefined, foundIn: 'none' });
    assert.deepEqual(scanProgressArgument('{"descr', 'description'), { progress: undefined, foundIn: 'none' });
  });

  it('decodes escapes as JSON does, including an escaped quote and \\u sequences, and ends the key only at an unescaped quote', () => {
    const text = JSON.stringify({ description: 'say "hi"\n\u00e9\\', path: 'a' });
    assert.equal(scanProgressArgument(text, 'description').progress, 'say "hi"\n\u00e9\\');
    // An escaped backslash before the closing quote: the string ends there.
    assert.equal(scanProgressArgument('{"description":"ends with \\\\","more":1', 'description').progress, 'ends with \\');
    // A fragment cut inside an escape is not complete.
    assert.equal(scanProgressArgument('{"description":"cut \\', 'description').progress, undefined);
  });

  it('skips other values (nested objects, arrays, strings holding braces and quotes) and never takes a nested property of the same name', () => {
    const text = JSON.stringify({ meta: { description: 'nested', list: ['}', '"{'] }, n: 12.5, ok: true, description: 'top' });
    assert.deepEqual(scanProgressArgument(text, 'description'), { progress: 'top', foundIn: 'streamed' });
    assert.equal(scanProgressArgument(JSON.stringify({ meta: { description: 'nested' } }), 'description').progress, undefined);
  });

  it('a non-string progress argument is undefined', () => {
    assert.equal(scanProgressArgument('{"description": 42}', 'description').progress, undefined);
    assert.equal(scanProgressArgument('{"description": null, "x": "y"}', 'description').progress, undefined);
  });

  it('a value that completes past 8,192 characters is read from the complete arguments after the response; a fragment cut there is undefined', () => {
    const big = 'x'.repeat(PROGRESS_SCAN_LIMIT);
    const text = JSON.stringify({ content: big, description: 'late' });
    assert.ok(text.indexOf('late') > PROGRESS_SCAN_LIMIT);
    assert.deepEqual(scanProgressArgument(text, 'description'), { progress: 'late', foundIn: 'complete' });
    // The progress value itself longer than the window: complete only at the end.
    const long = JSON.stringify({ description: 'd'.repeat(PROGRESS_SCAN_LIMIT + 10) });
    assert.deepEqual(scanProgressArgument(long, 'description'), { progress: 'd'.repeat(PROGRESS_SCAN_LIMIT + 10), foundIn: 'complete' });
    assert.deepEqual(scanProgressArgument(long.slice(0, PROGRESS_SCAN_LIMIT + 5), 'description'), { progress: undefined, foundIn: 'none' });
  });

  it('hostile texts (not an object, deep nesting, unbalanced brackets) give undefined without throwing', () => {
    for (const text of ['[1,2]', '"description"', '{"a":' + '['.repeat(100_000), '{"a":}}}}"description":"x"', '{,"description":"x"}', 'null']) {
      const scan = scanProgressArgument(text, 'description');
      assert.equal(typeof scan.progress === 'string' ? scan.foundIn : scan.progress, undefined, text.slice(0, 40));
    }
  });
});
