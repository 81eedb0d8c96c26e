import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { HealthEnrichmentSchema } from '../../../../../core/src/contracts/health-enrichment.js';
import { enrichment } from '../../../../../hub/plugins/tools-proxy/src/health-enrichment.js';
import { isTransportFailure } from '../../../../../hub/plugins/tools-proxy/src/mcp-pool.js';
import { outcomeOfMcpError } from '../../../../../hub/plugins/tools-proxy/src/tool-outcome.js';
import type { RegisteredDevice } from '../../../../../hub/plugins/registry/src/service.js';

const device: RegisteredDevice = {
  deviceId: 'cam-1',
  ips: ['127.0.0.1'],
  labels: [],
  roles: [],
  ports: { tools: 8765 },
  source: 'hello',
  namedInFile: false,
  toolUrl: 'http://127.0.0.1:8765/mcp',
  lastHelloAt: 1,
};

describe('tool outcome', () => {
  it('reports an MCP error of the device with its code', () => {
    assert.deepEqual(outcomeOfMcpError(new McpError(ErrorCode.InvalidParams, 'bad ms')), {
      status: 'error',
      error: 'MCP error -32602: bad ms',
      code: 'mcp_-32602',
    });
  });

  it('tells transport failures from MCP answers', () => {
    assert.equal(isTransportFailure(new TypeError('fetch failed')), true);
    assert.equal(isTransportFailure(new StreamableHTTPError(404, 'session gone')), true);
    assert.equal(isTransportFailure(new McpError(ErrorCode.ConnectionClosed, 'closed')), true);
    assert.equal(isTransportFailure(new McpError(ErrorCode.InvalidParams, 'bad')), false);
  });
});

describe('health enrichment', () => {
  it('fills every field from identity and the peer mesh', () => {
    const e = enrichment(
      { status: 'ok', cert_fingerprint_present: true },
      { status: 'ok', result: { cert_fingerprint: 'AA:BB', listen_ports: { tools: 8765, rtsp: 8554 }, overlay_mount: '/overlay' } },
      { status: 'ok', result: { peer_comm_status: 'ok', peers: [] } },
      device,
    );
    assert.ok(HealthEnrichmentSchema.safeParse(e).success);
    assert.equal(e.cert_fingerprint, 'AA:BB');
    assert.equal(e.cert_fingerprint_present, true);
    assert.equal(e.peer_comm_status, 'ok');
    assert.deepEqual(e.listen_ports, { tools: 8765, rtsp: 8554 });
    assert.equal(e.overlay_mount, '/overlay');
    assert.equal(e._vms_enriched, true);
    assert.equal(e._vms_enrichment_missing, undefined);
  });

  it('says what it could not obtain and falls back on what is known', () => {
    const e = enrichment(
      { status: 'ok', cert_fingerprint_present: true },
      { status: 'failed', error: 'the device did not answer get_device_identity within 50 ms' },
      { status: 'error', error: 'no tool named "get_peer_mesh_status"', code: 'tool_unknown' },
      device,
    );
    assert.ok(HealthEnrichmentSchema.safeParse(e).success);
    assert.equal(e.cert_fingerprint, null);
    assert.equal(e.cert_fingerprint_present, true, 'from the health answer itself');
    assert.equal(e.peer_mesh, null);
    assert.equal(e.peer_comm_status, null);
    assert.deepEqual(e.listen_ports, { tools: 8765 }, 'from the registry');
    const missing = e._vms_enrichment_missing!.join('\n');
    assert.match(missing, /cert_fingerprint: get_device_identity failed/);
    assert.match(missing, /peer_mesh: get_peer_mesh_status failed: no tool named/);
    assert.match(missing, /overlay_mount/);
  });
});
