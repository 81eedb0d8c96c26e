// The boundary rule of DESIGN.md, as a local ESLint rule: a plugin imports only `lookout/core`, its
// own files and other plugins' published surface (`service.ts`); core imports no plugin and no host.
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
const layer = (target) => (target.split('/')[0] === 'hub' ? (target.startsWith('hub/plugins/') ? 'hub-plugin' : 'hub') : target.split('/')[0]);

function check(context, node) {
  const spec = node.source?.value;
  if (typeof spec !== 'string') return;
  const file = context.filename;
  const from = relative(root, file).split(sep).join('/');
  const home = pluginHome(file);
  const report = (why) => context.report({ node: node.source, messageId: 'forbidden', data: { file: from, spec, why } });
  if (!spec.startsWith('.')) {
    if (home && spec.startsWith('lookout/') && !/^lookout\/(core|plugins\/[a-z0-9-]+|hub-plugins\/[a-z0-9-]+|builder-plugins\/[a-z0-9-]+)$/.test(spec)) {
      report("a plugin imports only 'lookout/core' and the plugins' published services ('lookout/plugins/<name>', 'lookout/hub-plugins/<name>')");
    }
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
  if (from.startsWith('core/') && ['plugins', 'hub', 'hub-plugin', 'edge', 'operator', 'examples', 'builder'].includes(layer(target))) {
    report(`core is the SDK both sides share: it imports no plugin and no host (this reaches ${target})`);
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
