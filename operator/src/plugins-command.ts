import { firstPartyPlugins } from 'lookout/core/host';
import type { Plugin } from 'lookout/core';
import { BASE_EXITS, defineCommand } from './command-spec.js';

const code = (s: string) => `\`${s}\``;
const list = (names: string[]) => names.map(code).join(', ') || '—';

/** The first-party plugins as a markdown table: what each provides, requires, publishes and serves. */
export function pluginTable(plugins: Plugin[]): string {
  const rows = plugins.map((p) => {
    const required = list((p.requires ?? []).map((t) => t.name));
    const optional = (p.optionalRequires ?? []).map((t) => t.name);
    const requires = optional.length ? `${required === '—' ? '' : `${required} `}(${list(optional)})` : required;
    const serves = list([...(p.tools ?? []).map((t) => t.name), ...(p.routes ?? []).map((r) => `${r.method} ${r.path}`)]);
    return `| ${code(p.name)} | ${p.layer ?? 'hub'} | ${list((p.provides ?? []).map((t) => t.name))} | ${requires} | ${list((p.topics ?? []).map((t) => t.suffix))} | ${serves} |`;
  });
  return ['| plugin | layer | provides | requires (optional) | publishes | tools / routes |', '|---|---|---|---|---|---|', ...rows].join('\n');
}

/** `lookout plugins`: the first-party plugins of the device images and the hub plugin set. */
export const pluginsCommand = defineCommand({
  summary: 'list the first-party plugins: services they provide and require, topics they publish, tools and routes they serve',
  usage: 'lookout plugins [--json]',
  positionals: false,
  about: `Lists the first-party plugins of the device images and the hub's plugin set: the layer each starts
at, the services it provides and requires, the topics it publishes, the tools and routes it serves
(a markdown table, or JSON).`,
  examples: [`lookout plugins`, `lookout plugins --json | jq '.[] | select(.layer == "layer2")'`],
  exits: BASE_EXITS,
  options: { json: { type: 'boolean' } },
  async run({ values }) {
    const plugins = await firstPartyPlugins();
    if (values.json) {
      const rows = plugins.map((p) => ({
        name: p.name,
        layer: p.layer ?? null,
        provides: (p.provides ?? []).map((t) => t.name),
        requires: (p.requires ?? []).map((t) => t.name),
        optional_requires: (p.optionalRequires ?? []).map((t) => t.name),
        topics: (p.topics ?? []).map((t) => t.suffix),
        tools: (p.tools ?? []).map((t) => t.name),
        routes: (p.routes ?? []).map((r) => `${r.method} ${r.path}`),
      }));
      console.log(JSON.stringify(rows));
    } else {
      console.log(pluginTable(plugins));
    }
    return 0;
  },
});
