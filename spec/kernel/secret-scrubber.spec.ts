import assert from 'node:assert/strict';
import { createLogger, SecretScrubber } from '../../kernel/logger.js';

describe('SecretScrubber', () => {
  const secret = 'sk/live+Key=0042"x\\y';

  it('replaces the value and its JSON-escaped, percent-encoded and hex spellings', () => {
    const s = new SecretScrubber();
    s.add(secret);
    const hex = Buffer.from(secret).toString('hex');
    const text = `a ${secret} b ${JSON.stringify(secret)} c ${encodeURIComponent(secret)} d ${hex} e ${hex.toUpperCase()}`;
    assert.equal(s.scrub(text), 'a [redacted] b "[redacted]" c [redacted] d [redacted] e [redacted]');
  });

  it('catches base64 and base64url of the value at every byte alignment inside a longer encoded string', () => {
    const s = new SecretScrubber();
    s.add(secret);
    for (const prefix of ['', 'B', 'Be', 'Bearer ']) {
      for (const encoding of ['base64', 'base64url'] as const) {
        const encoded = Buffer.from(`${prefix}${secret} tail`).toString(encoding);
        const out = s.scrub(`x ${encoded} y`);
        assert.match(out, /\[redacted\]/, `${encoding} with prefix ${JSON.stringify(prefix)}`);
        // What is left around the marker is too short to recover the value from.
        assert.ok(out.replace(/^x /, '').replace(/ y$/, '').replace('[redacted]', '').length < encoded.length - 20);
      }
    }
  });

  it('replaces longer registered values first, so a header line goes as a whole', () => {
    const s = new SecretScrubber();
    s.add('abcd');
    s.add('Bearer abcd');
    assert.equal(s.scrub('auth: Bearer abcd, again abcd'), 'auth: [redacted], again [redacted]');
  });

  it('ignores values shorter than 4 characters and leaves text without secrets alone', () => {
    const s = new SecretScrubber();
    s.add('abc');
    assert.equal(s.size, 0);
    assert.equal(s.scrub('abc abc'), 'abc abc');
    s.add('long-enough');
    assert.equal(s.size, 1);
    assert.equal(s.scrub('nothing secret here'), 'nothing secret here');
  });

  it('the logger writes every spelling redacted', () => {
    const s = new SecretScrubber();
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', scrubber: s, sink: (line) => lines.push(line) });
    s.add(secret);
    logger.warn('echo', { raw: secret, b64: Buffer.from(secret).toString('base64') });
    assert.equal(lines.length, 1);
    assert.ok(!lines[0]!.includes('0042'), lines[0]);
    assert.match(lines[0]!, /"raw":"\[redacted\]"/);
  });
});
