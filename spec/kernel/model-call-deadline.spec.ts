import assert from 'node:assert/strict';
import { retryAfterMs, settleOnAbort, startCallDeadline } from '../../kernel/model-call-deadline.js';

describe('kernel/model-call-deadline', () => {
  it('reads the pause an answer asks for: retry-after-ms first, then Retry-After in seconds or as an HTTP date', () => {
    assert.equal(retryAfterMs(new Headers({ 'retry-after-ms': '250', 'retry-after': '9' })), 250);
    assert.equal(retryAfterMs(new Headers({ 'retry-after': '1.5' })), 1500);
    const at = retryAfterMs(new Headers({ 'retry-after': new Date(Date.now() + 60_000).toUTCString() }));
    assert.ok(at !== undefined && at > 50_000 && at <= 60_000, String(at));
    assert.equal(retryAfterMs(new Headers({ 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' })), undefined, 'a date in the past asks for nothing');
    assert.equal(retryAfterMs(new Headers({ 'retry-after': '0' })), undefined);
    assert.equal(retryAfterMs(new Headers({ 'retry-after': 'soon' })), undefined);
    assert.equal(retryAfterMs(new Headers()), undefined);
  });

  it('settles with the abort reason as soon as the signal aborts, and swallows the work\'s late failure', async () => {
    const controller = new AbortController();
    let fail!: (err: Error) => void;
    const work = new Promise<string>((_resolve, reject) => (fail = reject));
    const settled = settleOnAbort(work, controller.signal);
    const reason = new Error('stop');
    controller.abort(reason);
    await assert.rejects(settled, (err) => err === reason);
    fail(new Error('late')); // no unhandled rejection
    await new Promise((r) => setImmediate(r));
  });

  it('passes the work\'s own result and failure through when nothing aborts', async () => {
    const signal = new AbortController().signal;
    assert.equal(await settleOnAbort(Promise.resolve(7), signal), 7);
    await assert.rejects(settleOnAbort(Promise.reject(new Error('own')), signal), /own/);
  });

  it('tells a deadline from the caller\'s abort', async () => {
    const caller = new AbortController();
    const deadline = startCallDeadline(caller.signal, 0.05);
    await new Promise((r) => deadline.signal.addEventListener('abort', r, { once: true }));
    assert.equal(deadline.timedOut(), true);
    const other = new AbortController();
    const second = startCallDeadline(other.signal, 60);
    other.abort(new Error('stop'));
    assert.equal(second.signal.aborted, true);
    assert.equal(second.timedOut(), false);
    assert.equal(startCallDeadline(other.signal, 0).signal, other.signal, 'no deadline: the caller\'s signal as it is');
  });
});
