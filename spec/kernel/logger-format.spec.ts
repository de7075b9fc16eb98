import assert from 'node:assert/strict';
import { createLogger, SecretScrubber, type LogRecord } from '../../kernel/logger.js';

/** Issue 10, item 4: `log.format: pretty` is real, and both formats print only scrubbed text. */
describe('logger formats', () => {
  const SECRET = 'sk-live-SECRET-4417/+=';

  function capture(format: 'json' | 'pretty') {
    const lines: string[] = [];
    const records: LogRecord[] = [];
    const scrubber = new SecretScrubber();
    scrubber.add(SECRET);
    const logger = createLogger({ level: 'debug', format, colorize: false, scrubber, sink: (line, record) => (lines.push(line), records.push(record)) });
    return { logger, lines, records };
  }

  it('json (the default) writes one JSON object a line', () => {
    const { logger, lines } = capture('json');
    logger.child({ component: 'runtime' }).warn('webhook delivery failed', { hookId: 'h1', status: 500 });
    assert.equal(lines.length, 1);
    const record = JSON.parse(lines[0]!) as LogRecord;
    assert.equal(record.level, 'warn');
    assert.equal(record.msg, 'webhook delivery failed');
    assert.equal(record.component, 'runtime');
    assert.equal(record.status, 500);
  });

  it('pretty writes pino-pretty lines: time, level label, message, one indented line per field', () => {
    const { logger, lines } = capture('pretty');
    logger.child({ component: 'runtime' }).error('operation failed', { operationId: 'op_1', error: 'boom' });
    logger.debug('model request', { messages: 3 });
    assert.equal(lines.length, 2);
    assert.match(lines[0]!, /^\[\d{2}:\d{2}:\d{2}\.\d{3}\] ERROR: operation failed\n {4}component: "runtime"\n {4}operationId: "op_1"\n {4}error: "boom"$/);
    assert.match(lines[1]!, /^\[\d{2}:\d{2}:\d{2}\.\d{3}\] DEBUG: model request\n {4}messages: 3$/);
  });

  for (const format of ['json', 'pretty'] as const) {
    it(`${format}: a secret in the message, a field or a nested error is scrubbed before formatting`, () => {
      const { logger, lines, records } = capture(format);
      logger.error(`call failed with ${SECRET}`, { header: `Bearer ${SECRET}`, cause: new Error(`echoed ${encodeURIComponent(SECRET)}`), nested: { b64: Buffer.from(SECRET).toString('base64') } });
      assert.equal(lines.length, 1);
      for (const text of [lines[0]!, JSON.stringify(records[0])]) {
        assert.ok(!text.includes(SECRET) && !text.includes(encodeURIComponent(SECRET)) && !text.includes(Buffer.from(SECRET).toString('base64')), text);
        assert.ok(text.includes('[redacted]'), text);
      }
    });
  }

  it('levels below the configured one are not written in either format', () => {
    for (const format of ['json', 'pretty'] as const) {
      const lines: string[] = [];
      const logger = createLogger({ level: 'error', format, sink: (line) => lines.push(line) });
      logger.warn('not shown');
      logger.error('shown');
      assert.equal(lines.length, 1);
      assert.match(lines[0]!, /shown/);
    }
  });
});
