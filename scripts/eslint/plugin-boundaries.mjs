// The boundary rule of DESIGN.md, as a local ESLint rule: a plugin imports only `lookout/core`, the
// shared libraries' entries (`lookout/lib/<name>`, `lookout/native`; a hub plugin also `lookout/hub`),
// its own files and other plugins' published surface (`service.ts`). A host (edge/, hub/src/,
// operator/) imports the same entries plus `lookout/core/host`, and its own files. A library (lib/<name>,
// native/ts) imports entries and its own files. Core imports nothing of the rest.
// Hand-written rather than eslint-plugin-boundaries: that one resolves imports through a module
// resolver, and our `.js` specifiers of `.ts` sources would need a TypeScript resolver on top; here
// the rule resolves a relative specifier against the file itself, which is exact for this layout.
import { dirname, relative, resolve, sep } from 'node:path';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..', '..');

/** `plugins/<name>`, `hub/plugins/<name>`, `builder/plugins/<name>` or `examples/<name>`: the folder a plugin owns, if any. */
function pluginHome(file) {
  const parts = relative(root, file).split(sep);
  if (parts[0] === 'plugins' && parts.length > 2) return parts.slice(0, 2).join('/');
  if ((parts[0] === 'hub' || parts[0] === 'builder') && parts[1] === 'plugins' && parts.length > 3) return parts.slice(0, 3).join('/');
  if (parts[0] === 'examples' && parts.length > 2) return parts.slice(0, 2).join('/');
  return undefined;
}

const isServiceSurface = (target) => /^((hub|builder)\/)?plugins\/[^/]+\/src\/service\.(js|ts)$/.test(target);
/** A plugin's loadable module (its default export): what a host lists in its plugin set. */
const isPluginEntry = (target) => /^((hub|builder)\/)?plugins\/[^/]+\/src\/index\.(js|ts)$/.test(target);

/** A host's or a library's own folder: relative imports stay inside it. */
function ownFolder(from) {
  const parts = from.split('/');
  if (parts[0] === 'edge' || parts[0] === 'operator') return parts[0];
  if ((parts[0] === 'hub' || parts[0] === 'builder') && parts[1] === 'src') return `${parts[0]}/src`;
  if (parts[0] === 'lib' && parts.length > 2) return parts.slice(0, 2).join('/');
  if (parts[0] === 'native' && parts[1] === 'ts') return 'native/ts';
  return undefined;
}

const PLUGIN_ENTRY = /^lookout\/(core|core\/contracts|native|lib\/[a-z0-9-]+|plugins\/[a-z0-9-]+|hub-plugins\/[a-z0-9-]+|builder-plugins\/[a-z0-9-]+)$/;
/** A host may import what a plugin may, plus the hosts' part of the SDK and the hub's services. */
const isHostEntry = (spec) => PLUGIN_ENTRY.test(spec) || spec === 'lookout/core/host' || spec === 'lookout/hub';

function check(context, node) {
  const spec = node.source?.value;
  if (typeof spec !== 'string') return;
  const file = context.filename;
  const from = relative(root, file).split(sep).join('/');
  const home = pluginHome(file);
  const report = (why) => context.report({ node: node.source, messageId: 'forbidden', data: { file: from, spec, why } });
  const own = ownFolder(from);
  if (!spec.startsWith('.')) {
    if (!spec.startsWith('lookout/')) return;
    if (from.startsWith('core/')) return report('core is the plugin SDK: it imports no library, host or plugin');
    // Hub plugins, and the builder's (served by the hub's HTTP composition), may use the hub's services.
    const hubPlugin = (home?.startsWith('hub/plugins/') || home?.startsWith('builder/plugins/')) && spec === 'lookout/hub';
    if (home && !PLUGIN_ENTRY.test(spec) && !hubPlugin) {
      report(
        "a plugin imports only 'lookout/core' (and 'lookout/core/contracts'), the libraries ('lookout/lib/<name>', 'lookout/native'; 'lookout/hub' in a hub plugin) and the plugins' published services",
      );
    }
    if (own && !isHostEntry(spec)) report(`a host or library imports only public entries ('lookout/core', 'lookout/core/host', 'lookout/lib/<name>', …)`);
    return;
  }
  const target = relative(root, resolve(dirname(file), spec))
    .split(sep)
    .join('/');
  if (home) {
    if (target === home || target.startsWith(`${home}/`)) return;
    if (isServiceSurface(target)) return;
    report(`a plugin imports only 'lookout/core' and other plugins' service.ts (this reaches ${target})`);
    return;
  }
  if (own) {
    if (target === own || target.startsWith(`${own}/`)) return;
    if (!own.startsWith('lib/') && !own.startsWith('native/') && (isServiceSurface(target) || isPluginEntry(target))) return;
    report(`a host or library imports its own files and public entries only ('lookout/core', 'lookout/lib/<name>', plugins' services; this reaches ${target})`);
    return;
  }
  if (from.startsWith('core/') && !target.startsWith('core/')) {
    report(`core is the plugin SDK: it imports no library, plugin or host (this reaches ${target})`);
  }
}

export default {
  meta: { name: 'lookout' },
  rules: {
    'plugin-boundaries': {
      meta: {
        type: 'problem',
        docs: { description: 'plugins import only lookout/core and other plugins’ service.ts; core imports no plugin or host' },
        messages: { forbidden: '{{file}} imports "{{spec}}": {{why}}' },
        schema: [],
      },
      create(context) {
        const visit = (node) => check(context, node);
        return { ImportDeclaration: visit, ExportNamedDeclaration: visit, ExportAllDeclaration: visit, ImportExpression: visit };
      },
    },
  },
};
