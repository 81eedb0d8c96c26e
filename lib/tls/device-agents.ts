import { Agent, type AgentOptions } from 'node:https';
import type { DevicePin } from './device-pin.js';

/**
 * The hub's https agents for dialling devices' TLS surfaces (the live stream, recordings): one per
 * device, trusting the fleet CA only and pinning the certificate the device announced
 * (`tls` is fleetCaDeviceTls's answer). An agent is replaced when the device's pinned fingerprint
 * changes (a renewed certificate it announced), so a connection never outlives the pin it was checked against.
 */
export class DeviceTlsAgents {
  private readonly agents = new Map<string, { fingerprint: string | null; agent: Agent }>();

  constructor(
    private readonly tls: (pin: DevicePin) => AgentOptions,
    private readonly agentOptions: AgentOptions = { keepAlive: true, timeout: 4000 },
  ) {}

  /** The device's agent; throws what `tls` throws (no fleet CA to verify with). */
  agentOf(pin: DevicePin): Agent {
    const kept = this.agents.get(pin.deviceId);
    if (kept && kept.fingerprint === pin.fingerprint) return kept.agent;
    kept?.agent.destroy();
    const agent = new Agent({ ...this.agentOptions, ...this.tls(pin) });
    this.agents.set(pin.deviceId, { fingerprint: pin.fingerprint, agent });
    return agent;
  }

  close(): void {
    for (const { agent } of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}
