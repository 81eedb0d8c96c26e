import { LookoutError } from '../errors/lookout-error.js';

export interface DependencyNode {
  name: string;
  dependsOn?: string[];
  optionalDependsOn?: string[];
}

/**
 * Start order by a depth-first walk (dependencies first). A missing required dependency and a cycle
 * are typed errors naming the plugins; optional dependencies only order, when present.
 * `disabled` names plugins that exist but are off (e.g. above the active layer), for a clearer message.
 */
export function dependencyOrder<T extends DependencyNode>(nodes: T[], disabled: Map<string, string> = new Map()): T[] {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const order: T[] = [];
  const state = new Map<string, 'visiting' | 'done'>();

  const visit = (node: T, path: string[]): void => {
    const mark = state.get(node.name);
    if (mark === 'done') return;
    if (mark === 'visiting') {
      const cycle = [...path.slice(path.indexOf(node.name)), node.name];
      throw new LookoutError('plugin_dependency_cycle', `plugins depend on each other in a cycle: ${cycle.join(' → ')}`, {
        details: { cycle },
      });
    }
    state.set(node.name, 'visiting');
    for (const dep of node.dependsOn ?? []) {
      const target = byName.get(dep);
      if (!target) {
        const why = disabled.get(dep);
        throw new LookoutError('plugin_dependency_missing', `plugin "${node.name}" depends on "${dep}", which is ${why ?? 'not loaded'}`, {
          details: { plugin: node.name, missing: dep },
        });
      }
      visit(target, [...path, node.name]);
    }
    for (const dep of node.optionalDependsOn ?? []) {
      const target = byName.get(dep);
      if (target) visit(target, [...path, node.name]);
    }
    state.set(node.name, 'done');
    order.push(node);
  };

  for (const node of nodes) visit(node, []);
  return order;
}
