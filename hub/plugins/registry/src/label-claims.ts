/** Labels bound by hellos, in all: a made-up label per hello cannot grow the table (or the saved state) without end. */
export const MAX_LABEL_BINDINGS = 20_000;
/** Labels one device's hellos may hold: a hello listing thousands of labels takes the first few only. */
export const MAX_LABELS_PER_DEVICE = 16;

export interface LabelBinding {
  label: string;
  device_id: string;
  /** When the device's hello first claimed it (epoch ms). */
  at: number;
}

/** Why a hello's label was not given to its device. */
export type LabelRefusal = { label: string; held_by: string; reason: 'held' } | { label: string; reason: 'bound_reached' };

/**
 * Which device holds a label that only hellos announce (issue 25, item 8). A hello is any device's
 * word: without this, a hostile device's hello announcing `lobby` took `target=lobby`. The first
 * device that claims a label keeps it; a later device claiming it is refused (counted, and the
 * registry says so), until the operator releases it or the registry file gives the label (the
 * file's labels never come here: the operator's word needs no claim).
 */
export class LabelClaims {
  private readonly holders = new Map<string, LabelBinding>();
  private readonly byDevice = new Map<string, Set<string>>();
  private refusedCount = 0;
  /** The latest refusal per device and label, for the registry's view (bounded like the bindings). */
  private readonly refusals = new Map<string, LabelRefusal & { device_id: string; at: number }>();

  /** The device holding `label`, or undefined. */
  holder(label: string): string | undefined {
    return this.holders.get(label)?.device_id;
  }

  /**
   * Claims each label for `deviceId` (first come), returning those refused: held by another device,
   * or past the bounds. `silent` (restored state) counts nothing.
   */
  claim(deviceId: string, labels: readonly string[], at: number, silent = false): LabelRefusal[] {
    const refused: LabelRefusal[] = [];
    let held = this.byDevice.get(deviceId)?.size ?? 0;
    for (const label of new Set(labels)) {
      const binding = this.holders.get(label);
      if (binding?.device_id === deviceId) continue;
      if (binding) refused.push({ label, held_by: binding.device_id, reason: 'held' });
      else if (held >= MAX_LABELS_PER_DEVICE || this.holders.size >= MAX_LABEL_BINDINGS) refused.push({ label, reason: 'bound_reached' });
      else {
        this.bind({ label, device_id: deviceId, at });
        held++;
      }
    }
    if (!silent) {
      this.refusedCount += refused.length;
      for (const r of refused) {
        if (this.refusals.size >= MAX_LABEL_BINDINGS) this.refusals.delete(this.refusals.keys().next().value!);
        const key = `${deviceId}\n${r.label}`;
        this.refusals.delete(key);
        this.refusals.set(key, { ...r, device_id: deviceId, at });
      }
    }
    return refused;
  }

  /** Frees `label` (the operator's word): the next hello announcing it claims it. Answers who held it. */
  release(label: string): string | undefined {
    const held = this.holders.get(label)?.device_id;
    this.holders.delete(label);
    if (held !== undefined) {
      const mine = this.byDevice.get(held);
      mine?.delete(label);
      if (mine?.size === 0) this.byDevice.delete(held);
    }
    for (const [key, r] of this.refusals) if (r.label === label) this.refusals.delete(key);
    return held;
  }

  /** Gives `label` to `deviceId` whoever held it (the operator's approval). */
  assign(label: string, deviceId: string, at: number): string | undefined {
    const held = this.release(label);
    this.bind({ label, device_id: deviceId, at });
    return held;
  }

  /** Bindings saved before a restart, in their order (oldest first); a label bound already keeps its holder. */
  restore(bindings: readonly LabelBinding[]): void {
    for (const b of bindings) if (!this.holders.has(b.label) && this.holders.size < MAX_LABEL_BINDINGS) this.bind(b);
  }

  private bind(b: LabelBinding): void {
    this.holders.set(b.label, { ...b });
    let mine = this.byDevice.get(b.device_id);
    if (!mine) this.byDevice.set(b.device_id, (mine = new Set()));
    mine.add(b.label);
  }

  bindings(): LabelBinding[] {
    return [...this.holders.values()];
  }

  /** Hello labels refused since the hub started. */
  get refused(): number {
    return this.refusedCount;
  }

  /** The latest refusals (newest last), each device and label once. */
  recentRefusals(): (LabelRefusal & { device_id: string; at: number })[] {
    return [...this.refusals.values()];
  }
}
