import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { LookoutError } from 'lookout/core';

/** The scope of fleet-wide notes (a device's notes are under device:<id>). */
export const FLEET_SCOPE = 'fleet';

export const NoteSchema = z.object({ id: z.string(), text: z.string(), created_at: z.string() });
export type Note = z.infer<typeof NoteSchema>;

/** What the hub state keeps: notes by agent, then by scope (a device id or `fleet`). */
export const MemorySnapshotSchema = z.object({ agents: z.record(z.string(), z.record(z.string(), z.array(NoteSchema))) });
type Snapshot = z.infer<typeof MemorySnapshotSchema>;

export interface MemoryBounds {
  /** Notes one agent keeps in one scope. */
  notesPerScope: number;
  /** Agent and scope pairs held in all. */
  scopes: number;
}

/**
 * Agents' notes per device and for the fleet, bounded: a note past a bound is refused
 * (svc-agent.memory_full) and nothing held is dropped; the agent deletes to make room.
 */
export class AgentMemory {
  private readonly agents = new Map<string, Map<string, Note[]>>();
  private pairs = 0;

  constructor(
    private readonly bounds: MemoryBounds,
    private readonly onChange: () => void,
  ) {}

  restore(s: Snapshot): void {
    for (const [agent, scopes] of Object.entries(s.agents)) {
      for (const [scope, notes] of Object.entries(scopes)) {
        if (this.pairs >= this.bounds.scopes) return;
        this.scopesOf(agent, true).set(scope, notes.slice(-this.bounds.notesPerScope));
        this.pairs++;
      }
    }
  }

  snapshot(): Snapshot {
    const agents: Snapshot['agents'] = {};
    for (const [agent, scopes] of this.agents) agents[agent] = Object.fromEntries(scopes);
    return { agents };
  }

  list(agent: string, scope: string): Note[] {
    return this.agents.get(agent)?.get(scope) ?? [];
  }

  add(agent: string, scope: string, text: string, now: Date): Note {
    const scopes = this.scopesOf(agent, false);
    const notes = scopes?.get(scope);
    if (!notes && this.pairs >= this.bounds.scopes) {
      throw new LookoutError('svc-agent.memory_full', `the hub keeps notes for ${this.bounds.scopes} agent and scope pairs at most; delete some first`, {
        details: { limit: this.bounds.scopes },
      });
    }
    if (notes && notes.length >= this.bounds.notesPerScope) {
      throw new LookoutError('svc-agent.memory_full', `${agent} keeps ${this.bounds.notesPerScope} notes in ${scope} at most; delete some first`, {
        details: { limit: this.bounds.notesPerScope, agent, scope },
      });
    }
    const note = { id: randomUUID(), text, created_at: now.toISOString() };
    if (notes) notes.push(note);
    else {
      this.scopesOf(agent, true).set(scope, [note]);
      this.pairs++;
    }
    this.onChange();
    return note;
  }

  /** Deletes one note (by id) or the whole scope; answers how many went. */
  remove(agent: string, scope: string, id: string | undefined): number {
    const scopes = this.agents.get(agent);
    const notes = scopes?.get(scope);
    if (!scopes || !notes) return 0;
    const kept = id === undefined ? [] : notes.filter((n) => n.id !== id);
    const removed = notes.length - kept.length;
    if (kept.length === 0) {
      scopes.delete(scope);
      this.pairs--;
      if (scopes.size === 0) this.agents.delete(agent);
    } else scopes.set(scope, kept);
    if (removed > 0) this.onChange();
    return removed;
  }

  private scopesOf(agent: string, create: true): Map<string, Note[]>;
  private scopesOf(agent: string, create: false): Map<string, Note[]> | undefined;
  private scopesOf(agent: string, create: boolean): Map<string, Note[]> | undefined {
    let scopes = this.agents.get(agent);
    if (!scopes && create) this.agents.set(agent, (scopes = new Map<string, Note[]>()));
    return scopes;
  }
}
