import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HubMetrics } from '../../../hub/src/hub-metrics.js';
import { promtoolCheckMetrics } from '../../support/promtool.js';

/** Label values of one metric in the exposition text. */
function labelValues(text: string, metric: string, label: string): string[] {
  const values = new Set<string>();
  const re = new RegExp(`^${metric}\\{([^}]*)\\}`, 'gm');
  for (const m of text.matchAll(re)) {
    const v = new RegExp(`${label}="([^"]*)"`).exec(m[1]);
    if (v) values.add(v[1]);
  }
  return [...values].sort();
}

describe('hub metrics', () => {
  it('takes tool labels only from the known tools, so junk names cannot push real ones into other', async () => {
    const metrics = new HubMetrics({ defaultMetrics: false });
    metrics.setKnownTools(['get_system_health', 'set_camera_profile']);
    // Before: the first 64 names seen became labels, so 70 junk names left the real tools as `other`.
    for (let i = 0; i < 70; i++) metrics.toolCall(`junk_${i}`, 'error', 0.01);
    metrics.toolCall('get_system_health', 'ok', 0.02);
    metrics.toolCall('set_camera_profile', 'ok', 0.02);
    const { body } = await metrics.text();
    assert.deepEqual(labelValues(body, 'lookout_hub_tool_calls_total', 'tool'), ['get_system_health', 'other', 'set_camera_profile']);
    assert.match(body, /lookout_hub_tool_calls_total\{tool="other",outcome="error"\} 70/);
  });

  it('takes a predicate too, and still bounds what it admits', async () => {
    const metrics = new HubMetrics({ defaultMetrics: false });
    metrics.setKnownTools((name) => name.startsWith('get_'));
    for (let i = 0; i < 600; i++) metrics.toolCall(`get_${i}`, 'ok', 0.01);
    metrics.toolCall('rm_everything', 'ok', 0.01);
    metrics.toolCall('get_a{b}', 'ok', 0.01);
    const tools = labelValues((await metrics.text()).body, 'lookout_hub_tool_calls_total', 'tool');
    assert.ok(tools.includes('other'));
    assert.ok(!tools.includes('rm_everything'));
    assert.ok(tools.length <= 513, `${tools.length} tool labels`);
  });

  it('keeps the first-come labels, bounded, until known tools are given', async () => {
    const metrics = new HubMetrics({ defaultMetrics: false });
    for (let i = 0; i < 100; i++) metrics.toolCall(`t${i}`, 'ok', 0.01);
    const tools = labelValues((await metrics.text()).body, 'lookout_hub_tool_calls_total', 'tool');
    assert.equal(tools.length, 65);
    assert.ok(tools.includes('other'));
  });

  it('names no gauge *_total (promtool: that is the counter suffix), default metrics included', async () => {
    const metrics = new HubMetrics({ defaultMetrics: true });
    metrics.ingested('dets');
    const { body } = await metrics.text();
    const types = [...body.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, name, type]) => ({ name, type }));
    assert.ok(types.length > 10, 'default metrics are there');
    // Before: lookout_hub_nodejs_active_handles_total and its two siblings were gauges.
    assert.deepEqual(
      types.filter((t) => t.type !== 'counter' && t.name.endsWith('_total')),
      [],
    );
    for (const t of types.filter((t) => t.type === 'counter')) assert.ok(t.name.endsWith('_total'), `counter ${t.name}`);
    assert.ok(types.some((t) => t.name === 'lookout_hub_nodejs_active_handles' && t.type === 'gauge'));
  });

  it('counts every ingested message per contract, scrape after scrape (counted in the ingest, handed over when scraped)', async () => {
    const metrics = new HubMetrics({ defaultMetrics: false });
    for (let i = 0; i < 5; i++) metrics.ingested('dets');
    metrics.ingested('telemetry');
    const first = (await metrics.text()).body;
    assert.match(first, /^lookout_hub_ingest_messages_total\{topic="dets"\} 5$/m);
    assert.match(first, /^lookout_hub_ingest_messages_total\{topic="telemetry"\} 1$/m);
    metrics.ingested('dets');
    const second = (await metrics.text()).body;
    assert.match(second, /^lookout_hub_ingest_messages_total\{topic="dets"\} 6$/m, 'cumulative: neither reset nor counted twice by a scrape');
    assert.match(second, /^lookout_hub_ingest_messages_total\{topic="telemetry"\} 1$/m);
    assert.equal((await metrics.text()).body, second, 'a scrape with nothing new changes nothing');
    assert.equal(metrics.ingestRate() >= 0, true);
  });

  it("a replica's gauges: stale, and how far behind the shared stream it reads (no series while unmeasured); none on a single hub", async () => {
    const single = new HubMetrics({ defaultMetrics: false });
    assert.doesNotMatch((await single.text()).body, /lookout_hub_replica_/);
    const replica = new HubMetrics({ defaultMetrics: false });
    let status: { stale: boolean; readLagMs: number | null } = { stale: false, readLagMs: 0 };
    replica.setReplicaSource('hubs-eu', () => status);
    const caughtUp = (await replica.text()).body;
    assert.match(caughtUp, /^lookout_hub_replica_stale\{group="hubs-eu"\} 0$/m);
    assert.match(caughtUp, /^lookout_hub_replica_read_lag_seconds\{group="hubs-eu"\} 0$/m);
    status = { stale: true, readLagMs: 2500 };
    const behind = (await replica.text()).body;
    assert.match(behind, /^lookout_hub_replica_stale\{group="hubs-eu"\} 1$/m);
    assert.match(behind, /^lookout_hub_replica_read_lag_seconds\{group="hubs-eu"\} 2\.5$/m);
    status = { stale: true, readLagMs: null };
    const away = (await replica.text()).body;
    assert.doesNotMatch(away, /^lookout_hub_replica_read_lag_seconds\{/m, 'Redis away: no figure, not a zero that says caught up');
    assert.match(away, /^lookout_hub_replica_stale\{group="hubs-eu"\} 1$/m);
    const check = await promtoolCheckMetrics(away);
    assert.equal(check.code, 0, check.output);
  });
});
