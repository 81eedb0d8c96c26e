import type { AutomationEntry, Logger } from 'lookout/core';

/** Entries kept for an owner that starts after the plugin that reported them. */
const KEPT_BEFORE_LISTENER = 16;

/**
 * The device's automation log hook (deviceInfo's reportAutomation / onAutomation): plugins that act
 * on their own report here, and the owner of events/automation_log (the status plugin) publishes.
 * One topic, one owner (the loader refuses two claims), many reporters. Entries reported before the
 * owner listens (plugins start in dependency order) are kept, a few, and handed to it when it does.
 */
export function automationHook(log: Logger): {
  report(entry: AutomationEntry): void;
  listen(listener: (entry: AutomationEntry, at: Date) => void): () => void;
} {
  const listeners = new Set<(entry: AutomationEntry, at: Date) => void>();
  const early: { entry: AutomationEntry; at: Date }[] = [];
  const deliver = (listener: (entry: AutomationEntry, at: Date) => void, entry: AutomationEntry, at: Date): void => {
    try {
      listener(entry, at);
    } catch (err) {
      log.warn({ err, action: entry.action }, 'an automation_log listener failed');
    }
  };
  return {
    report(entry) {
      const at = new Date();
      log.info({ action: entry.action, plugin: entry.plugin, outcome: entry.outcome }, entry.message);
      if (listeners.size === 0) {
        early.push({ entry, at });
        if (early.length > KEPT_BEFORE_LISTENER) early.shift();
        return;
      }
      for (const l of [...listeners]) deliver(l, entry, at);
    },
    listen(listener) {
      listeners.add(listener);
      for (const e of early.splice(0)) deliver(listener, e.entry, e.at);
      return () => listeners.delete(listener);
    },
  };
}
