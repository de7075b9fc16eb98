import assert from 'node:assert/strict';
import { InvalidRequestError } from '../../../plugins/agent-api/agent-errors.js';
import { MAX_ATTACHMENT_BASE64_CHARS, parseDeliveredMessage, renderDeliveredMessage } from '../../../plugins/agent-api/delivered-message.js';

/** Asserts `fn` throws InvalidRequestError (`invalid_request`, 400) whose message and details name `field`. */
function rejectsField(fn: () => unknown, field: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof InvalidRequestError, `expected InvalidRequestError, got ${String(err)}`);
    assert.equal(err.type, 'invalid_request');
    assert.equal(err.status, 400);
    assert.equal(err.code, 'INVALID_REQUEST');
    assert.ok(err.message.includes(field), `message ${JSON.stringify(err.message)} should name ${field}`);
    assert.equal(err.details?.field, field);
    return true;
  });
}

const png = Buffer.from('not really a png').toString('base64');

describe('agent-api: DeliveredMessage', () => {
  it('a bare string is a user message with that body', () => {
    assert.deepEqual(parseDeliveredMessage('hello'), { kind: 'user', body: 'hello' });
    assert.deepEqual(parseDeliveredMessage(''), { kind: 'user', body: '' });
  });

  it('accepts a user message with image attachments and returns a frozen copy', () => {
    const input = { kind: 'user', body: 'look', attachments: [{ type: 'image', data: png, mimeType: 'image/png', filename: 'a.png' }] };
    const parsed = parseDeliveredMessage(input);
    assert.deepEqual(parsed, input);
    assert.ok(Object.isFrozen(parsed));
    input.attachments[0]!.data = 'changed';
    assert.equal(parsed.kind === 'user' && parsed.attachments?.[0]?.data, png);
  });

  it('refuses an attachment over 14 MiB of base64 characters, and accepts one exactly at the cap', () => {
    const atCap = 'A'.repeat(MAX_ATTACHMENT_BASE64_CHARS);
    assert.equal(MAX_ATTACHMENT_BASE64_CHARS, 14 * 1024 * 1024);
    assert.doesNotThrow(() => parseDeliveredMessage({ kind: 'user', body: '', attachments: [{ type: 'image', data: atCap, mimeType: 'image/png' }] }));
    rejectsField(() => parseDeliveredMessage({ kind: 'user', body: '', attachments: [{ type: 'image', data: `${atCap}AAAA`, mimeType: 'image/png' }] }), 'message.attachments[0].data');
  });

  it('refuses attachments that are not base64 images, naming the attachment and field', () => {
    const ok = { type: 'image', data: png, mimeType: 'image/png' };
    rejectsField(() => parseDeliveredMessage({ kind: 'user', body: '', attachments: [ok, { ...ok, type: 'file' }] }), 'message.attachments[1].type');
    rejectsField(() => parseDeliveredMessage({ kind: 'user', body: '', attachments: [{ ...ok, data: 'not base64!' }] }), 'message.attachments[0].data');
    rejectsField(() => parseDeliveredMessage({ kind: 'user', body: '', attachments: [{ ...ok, mimeType: 'text/plain' }] }), 'message.attachments[0].mimeType');
    rejectsField(() => parseDeliveredMessage({ kind: 'user', body: '', attachments: [{ ...ok, filename: 7 }] }), 'message.attachments[0].filename');
    rejectsField(() => parseDeliveredMessage({ kind: 'user', body: '', attachments: ok }), 'message.attachments');
  });

  it('refuses a missing kind, an unknown kind, a non-string body and unknown fields', () => {
    rejectsField(() => parseDeliveredMessage({ body: 'x' }), 'message.kind');
    rejectsField(() => parseDeliveredMessage({ kind: 'assistant', body: 'x' }), 'message.kind');
    rejectsField(() => parseDeliveredMessage({ kind: 'user', body: 42 }), 'message.body');
    rejectsField(() => parseDeliveredMessage({ kind: 'user' }), 'message.body');
    rejectsField(() => parseDeliveredMessage({ kind: 'user', body: 'x', attachment: [] }), 'message.attachment');
    rejectsField(() => parseDeliveredMessage(null), 'message');
    rejectsField(() => parseDeliveredMessage(['hi']), 'message');
    rejectsField(() => parseDeliveredMessage(42), 'message');
  });

  it('accepts a signal with type, body, string attributes and an XML-name tagName', () => {
    const signal = { kind: 'signal', type: 'slack.message', body: 'hi', attributes: { user: 'U1', 'x-y.z_1': 'v' }, tagName: '_slack-msg.v1' };
    assert.deepEqual(parseDeliveredMessage(signal), signal);
  });

  it('refuses a signal with an empty or missing type, a non-string body or non-string attribute values', () => {
    rejectsField(() => parseDeliveredMessage({ kind: 'signal', type: '', body: 'x' }), 'message.type');
    rejectsField(() => parseDeliveredMessage({ kind: 'signal', body: 'x' }), 'message.type');
    rejectsField(() => parseDeliveredMessage({ kind: 'signal', type: 't', body: { a: 1 } }), 'message.body');
    rejectsField(() => parseDeliveredMessage({ kind: 'signal', type: 't', body: 'x', attributes: { n: 1 } }), 'message.attributes.n');
    rejectsField(() => parseDeliveredMessage({ kind: 'signal', type: 't', body: 'x', attributes: ['a'] }), 'message.attributes');
    rejectsField(() => parseDeliveredMessage({ kind: 'signal', type: 't', body: 'x', attributes: { 'a b': 'v' } }), 'message.attributes');
    rejectsField(() => parseDeliveredMessage({ kind: 'signal', type: 't', body: 'x', attributes: { type: 'v' } }), 'message.attributes.type');
  });

  it('refuses a tagName that is not an XML name: leading digit, hyphen or dot, spaces, markup', () => {
    for (const tagName of ['1abc', '-abc', '.abc', 'a b', 'a>b', 'a"b', '', 'é', 'a:b']) {
      rejectsField(() => parseDeliveredMessage({ kind: 'signal', type: 't', body: 'x', tagName }), 'message.tagName');
    }
  });

  it('renders a user message as its body', () => {
    assert.equal(renderDeliveredMessage(parseDeliveredMessage('plain <b> & text')), 'plain <b> & text');
  });

  it('renders a signal as an XML block: type and attributes escaped, body escaped, tag as given', () => {
    const text = renderDeliveredMessage(
      parseDeliveredMessage({ kind: 'signal', type: 'a"b', body: '</signal><x>& more', attributes: { who: '"Eve" <e@x> &\nnext' }, tagName: 'chat.msg' }),
    );
    assert.equal(text, '<chat.msg type="a&quot;b" who="&quot;Eve&quot; &lt;e@x&gt; &amp;&#10;next">\n&lt;/signal&gt;&lt;x&gt;&amp; more\n</chat.msg>');
  });

  it('renders a signal without tagName as a <signal> block', () => {
    assert.equal(renderDeliveredMessage(parseDeliveredMessage({ kind: 'signal', type: 'cron', body: 'tick' })), '<signal type="cron">\ntick\n</signal>');
  });
});
