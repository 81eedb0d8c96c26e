/**
 * Remedies reach devices on their cmd topics and are matched to the device's answer by request id,
 * over the core's plugin bus on an in-memory broker: an answer published under another device's
 * topic (a device may publish only there) never completes this device's command, and silence ends
 * in device_timeout.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ToolCommandSchema } from '../../../../../core/src/contracts/index.js';
import { MemoryBus } from '../../../../../core/src/bus/memory-bus.js';
import { createPluginBus } from '../../../../../core/src/plugin/plugin-bus.js';
import { DeviceCommands, RESPONSES_FILTER } from '../../../../../hub/plugins/remediate/src/device-commands.js';

async function rig(timeoutMs: number) {
  const port = new MemoryBus();
  const bus = createPluginBus({
    plugin: 'remediate',
    port,
    namespace: '',
    topics: [{ suffix: 'devices/+/cmd/tool', qos: 1, schema: ToolCommandSchema }],
    subscriptions: [RESPONSES_FILTER],
    track: () => undefined,
  });
  const commands = new DeviceCommands(bus, timeoutMs);
  await commands.start();
  const sent: { topic: string; body: { tool: string; request_id: string } }[] = [];
  await port.subscribe('devices/+/cmd/tool', (topic, payload) => sent.push({ topic, body: JSON.parse(payload.toString()) }));
  const answer = (device: string, body: Record<string, unknown>) =>
    port.publish(`devices/${device}/responses`, JSON.stringify({ timestamp: new Date().toISOString(), kind: 'tool', ...body }));
  return { port, commands, sent, answer };
}

test('a command goes on the device’s cmd/tool topic and resolves with its answer, never with another device’s', async () => {
  const { commands, sent, answer } = await rig(5000);
  const pending = commands.call('cam-1', 'restart_plugin', { name: 'flaky' });
  await new Promise((r) => setImmediate(r));
  assert.equal(sent.length, 1);
  assert.equal(sent[0].topic, 'devices/cam-1/cmd/tool');
  assert.deepEqual([sent[0].body.tool, (sent[0].body as { arguments?: unknown }).arguments], ['restart_plugin', { name: 'flaky' }]);
  const id = sent[0].body.request_id;
  let settled = false;
  void pending.then(() => (settled = true));
  // Another device answers with this request's id: ignored.
  await answer('cam-2', { ok: true, request_id: id, result: { state: 'ok', forged: true } });
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(settled, false);
  await answer('cam-1', { ok: true, request_id: id, result: { name: 'flaky', state: 'ok' } });
  const reply = await pending;
  assert.deepEqual([reply.ok, (reply as { result?: unknown }).result], [true, { name: 'flaky', state: 'ok' }]);
  await commands.stop();
});

test('no answer in time is device_timeout', async () => {
  const { commands } = await rig(100);
  await assert.rejects(commands.call('cam-1', 'prune_recordings', {}), { code: 'device_timeout' });
  await commands.stop();
});
