#!/usr/bin/env node
/**
 * An example agent (issue 29 item 6): an MCP client, on the official TypeScript SDK, that answers
 * "how many people were at <camera> in the last ten minutes, and show me a snapshot" from the hub's
 * MCP server (`POST /mcp`). The numbers are the devices' own counts from the fleet history
 * (`history_people_seen`), never a model's guess, and the answer says which devices and span they
 * cover; the picture is the `snapshot` tool's image block, written to a file.
 *
 *   npm start                                   (in another terminal: the hub on 127.0.0.1:8788)
 *   node examples/fleet-agent/agent.mjs --camera sim-cam-1
 *   node examples/fleet-agent/agent.mjs --hub http://127.0.0.1:8788 --camera front_door --minutes 10 --out snap.jpg
 *
 * --token (or LOOKOUT_HUB_TOKEN) when the hub asks for one; --json prints the answer as JSON.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const { values: args } = parseArgs({
  options: {
    hub: { type: 'string', default: process.env.LOOKOUT_HUB_URL ?? 'http://127.0.0.1:8788' },
    camera: { type: 'string', default: 'sim-cam-1' },
    minutes: { type: 'string', default: '10' },
    out: { type: 'string', default: 'snapshot.jpg' },
    token: { type: 'string', default: process.env.LOOKOUT_HUB_TOKEN },
    json: { type: 'boolean', default: false },
  },
});

/** Calls a hub tool; a tool error (isError) becomes an exception with the hub's own message. */
async function call(client, name, toolArgs) {
  const result = await client.callTool({ name, arguments: toolArgs });
  if (result.isError) throw new Error(`${name}: ${result.content?.map((c) => c.text ?? '').join(' ')}`);
  return result;
}

const minutes = Number(args.minutes);
if (!Number.isFinite(minutes) || minutes <= 0) throw new Error('--minutes must be a positive number');
const headers = args.token ? { Authorization: `Bearer ${args.token}` } : {};
const client = new Client({ name: 'lookout-example-agent', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', args.hub), { requestInit: { headers } }));
try {
  const to = new Date();
  const from = new Date(to.getTime() - minutes * 60_000);
  const people = (await call(client, 'history_people_seen', { target: args.camera, from: from.toISOString(), to: to.toISOString() })).structuredContent;
  const snap = await call(client, 'snapshot', { target: args.camera });
  const image = snap.content.find((c) => c.type === 'image');
  if (image) writeFileSync(args.out, Buffer.from(image.data, 'base64'));

  const answer = {
    camera: args.camera,
    minutes,
    most_at_once: people.person_max,
    distinct_people: people.unique_person_tracks,
    mean: people.person_mean,
    sources: people.sources,
    snapshot: image
      ? {
          file: args.out,
          bytes: snap.structuredContent?.bytes ?? null,
          source: snap.structuredContent?.source ?? null,
          sources: snap.structuredContent?.sources,
        }
      : null,
  };
  if (args.json) {
    console.log(JSON.stringify(answer));
  } else {
    const tracked = people.unique_person_tracks > 0 ? `, ${people.unique_person_tracks} distinct people (tracks)` : '';
    console.log(
      `In the last ${minutes} minutes at ${args.camera}: at most ${people.person_max} people at once${tracked}` +
        ` (from ${people.sources.devices.join(', ') || 'no device'}'s own counts, ${people.sources.from} to ${people.sources.to}).`,
    );
    console.log(image ? `Snapshot: ${args.out} (${answer.snapshot.bytes} bytes, ${answer.snapshot.source})` : 'No snapshot came back.');
  }
} finally {
  await client.close();
}
