import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { OperationEvents, type OperationEvent } from '../../../kernel/runtime/operation-events.js';
import { eventChannel, MAX_PENDING_PUBLISHES, MAX_RELAYED_EVENT_CHARS, RedisEventRelay } from '../../../plugins/execution-queue/redis-event-relay.js';
import { redisAddress } from '../../../plugins/execution-queue/redis-address.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { REDIS_URL, uniquePrefix, until } from './queue-fixtures.js';
import { killRelaySubscribers } from './queue-stream-fixtures.js';

const log = (operationId: string, message: string): OperationEvent => ({ type: 'tool_log', operationId, stepIndex: 1, toolCallId: 'call_1', identifier: 'agent', apiName: 'work', level: 'info', message });

/** One process's side of the relay: its events and what it heard. */
async function openSide(prefix: string): Promise<{ relay: RedisEventRelay; events: OperationEvents; heard: OperationEvent[]; lines: string[] }> {
  const { logger, lines } = captureLogger();
  const relay = new RedisEventRelay({ address: redisAddress({ url: REDIS_URL, host: '127.0.0.1', port: 6379 }, {}), prefix, logger });
  const events = new OperationEvents();
  const heard: OperationEvent[] = [];
  events.on((e) => heard.push(e));
  await relay.open(events);
  return { relay, events, heard, lines };
}

/** Issue 16 item 4: the Redis pub/sub relay of operation events between the processes of one queue (the local Redis). */
describe('execution-queue: the operation event relay on Redis pub/sub', function () {
  this.timeout(30_000);
  let prefix: string;
  const open: RedisEventRelay[] = [];
  let raw: Redis;

  beforeEach(async () => {
    prefix = uniquePrefix();
    raw = new Redis(REDIS_URL, { lazyConnect: true });
    await raw.connect();
  });
  afterEach(async () => {
    for (const relay of open.splice(0)) await relay.close();
    raw.disconnect();
  });
  const side = async (p = prefix) => {
    const s = await openSide(p);
    open.push(s.relay);
    return s;
  };

  it('an event emitted in one process is heard once in the other, in order, and never echoed back or relayed again', async () => {
    const a = await side();
    const b = await side();
    for (let i = 1; i <= 20; i++) a.events.emit(log('op_1', `line ${i}`));
    await until(async () => b.heard.length >= 20, 10_000, 'b to hear the 20 lines');
    assert.deepEqual(b.heard.map((e) => (e as { message: string }).message), Array.from({ length: 20 }, (_, i) => `line ${i + 1}`));
    // A marker from b: once a hears it, anything b relayed back would have come before it.
    b.events.emit(log('op_2', 'marker'));
    await until(async () => a.heard.some((e) => e.operationId === 'op_2'), 10_000, 'a to hear the marker');
    assert.equal(a.heard.filter((e) => e.operationId === 'op_1').length, 20, 'a heard its own lines once (emitted here), none relayed back');
    assert.equal(b.heard.filter((e) => e.operationId === 'op_2').length, 1);
  });

  it('attack: messages on the channel that no relay wrote (not JSON, not an object, unknown event types, no operation id, too big) are dropped; installations on other prefixes hear nothing', async () => {
    const b = await side();
    const other = await side(uniquePrefix());
    const channel = eventChannel(prefix);
    const bad = [
      'not json',
      '[1,2]',
      'null',
      JSON.stringify({ origin: 'x', event: { type: 'rm_rf', operationId: 'op_1' } }),
      JSON.stringify({ origin: 'x', event: { type: 'tool_log' } }),
      JSON.stringify({ origin: 'x', event: { type: 'tool_log', operationId: 'o'.repeat(201) } }),
      JSON.stringify({ origin: 'x', event: ['tool_log'] }),
      JSON.stringify({ event: log('op_1', 'no origin') }),
      JSON.stringify({ origin: 'x', event: log('op_1', 'x'.repeat(MAX_RELAYED_EVENT_CHARS)) }),
    ];
    for (const text of bad) await raw.publish(channel, text);
    await raw.publish(channel, JSON.stringify({ origin: 'x', event: log('op_ok', 'marker') }));
    await until(async () => b.heard.length >= 1, 10_000, 'b to hear the marker');
    assert.deepEqual(b.heard.map((e) => [e.operationId, (e as { message: string }).message]), [['op_ok', 'marker']]);
    assert.deepEqual(other.heard, []);
  });

  it('a subscriber connection killed (CLIENT KILL) reconnects and subscribes again by itself: later events are heard', async () => {
    const a = await side();
    const b = await side();
    assert.ok((await killRelaySubscribers(prefix)) >= 2);
    await until(async () => b.relay.listening && a.relay.listening, 15_000, 'the subscribers to reconnect');
    // Published until heard: the resubscription follows the reconnect by a round trip.
    let n = 0;
    await until(async () => {
      a.events.emit(log('op_after', `after ${++n}`));
      return b.heard.some((e) => e.operationId === 'op_after');
    }, 15_000, 'b to hear events after the reconnect', 200);
  });

  it(`bounds what waits for Redis: of ${MAX_PENDING_PUBLISHES * 4} events emitted at once ${MAX_PENDING_PUBLISHES} are relayed, the rest dropped with a warning; later ones go through`, async () => {
    const a = await side();
    const b = await side();
    for (let i = 0; i < MAX_PENDING_PUBLISHES * 4; i++) a.events.emit(log('op_burst', `line ${i}`));
    await until(async () => b.heard.length >= MAX_PENDING_PUBLISHES, 15_000, 'b to hear the first events');
    a.events.emit(log('op_late', 'late'));
    await until(async () => b.heard.some((e) => e.operationId === 'op_late'), 15_000, 'b to hear a later event');
    assert.equal(b.heard.filter((e) => e.operationId === 'op_burst').length, MAX_PENDING_PUBLISHES);
    assert.deepEqual(b.heard.slice(0, 3).map((e) => (e as { message: string }).message), ['line 0', 'line 1', 'line 2']);
    assert.ok(a.lines.some((l) => l.includes('the event relay lost events')), a.lines.join('\n'));
  });
});
