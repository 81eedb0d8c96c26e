import { BUS_CONTRACTS, type BusSuffix } from 'lookout/core/contracts';
import { compileContract, type ContractCheck } from './compiled-contract.js';
import { Refusal } from './ingest-events.js';
import type { KnownTopic } from './parse-stage.js';

/** The 10 Hz contracts: checked by compiled code; the others go through zod directly. */
export const HOT_CONTRACTS: BusSuffix[] = ['dets', 'telemetry'];
/** Contracts whose device_id field names the publishing device itself. */
const SELF_NAMING = new Set<string>(['hello', 'status', 'health']);

/** Stage (b): the message against its topic's wire contract, and a device speaking only for itself. */
export class ContractStage {
  private readonly checks = new Map<string, ContractCheck>(HOT_CONTRACTS.map((k) => [k, compileContract(BUS_CONTRACTS[k].schema)]));

  check(known: KnownTopic, value: unknown): Record<string, unknown> | Refusal {
    const { deviceId, suffix, key, topic } = known;
    const parsed = (this.checks.get(key) ?? known.contract.schema).safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue.path.length ? issue.path.map(String).join('.') : '(root)';
      return new Refusal(topic, deviceId, suffix, key, 'schema', `${where}: ${issue.message}`);
    }
    const message = parsed.data as Record<string, unknown>;
    // A device speaks only on its own topics: a hello naming another device would re-register it
    // (its tool calls would go to the announced address), a status would mark it offline.
    if (SELF_NAMING.has(key) && typeof message.device_id === 'string' && message.device_id !== deviceId) {
      return new Refusal(
        topic,
        deviceId,
        suffix,
        key,
        'schema',
        `device_id: "${message.device_id.slice(0, 128)}" is not the device of its topic (${deviceId})`,
      );
    }
    return message;
  }
}
