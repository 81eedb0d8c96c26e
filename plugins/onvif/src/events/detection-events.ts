import type { Detection } from 'lookout/core/contracts';
import type { EventMessage } from './event-message.js';
import { TOPIC } from './topics.js';

export interface DetectionEventsOptions {
  /** How long IsPeople / IsMotion stay true after the last person / the last motion. */
  holdMs: number;
  /** VideoSourceConfigurationToken in each event's Source. */
  sourceToken: string;
}

const PERSON_CLASS = 0;
/** Below this overlap two boxes of consecutive frames are not the same object (used when there is no track_id). */
const SAME_OBJECT_IOU = 0.3;
/** A box "moved" when its centre shifted by more than this share of its diagonal: detector jitter stays below it. */
const MOVE_SHARE = 0.05;
const MIN_MOVE_PX = 2;

type Box = [number, number, number, number];
const box = (d: Detection): Box => [d.b[0], d.b[1], d.b[2], d.b[3]];

function iou(a: Box, b: Box): number {
  const w = Math.min(a[2], b[2]) - Math.max(a[0], b[0]);
  const h = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
  if (w <= 0 || h <= 0) return 0;
  const inter = w * h;
  return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter);
}

/** The detection of the previous batch that is the same object: same track_id when tracked, else best overlap of the same class. */
function previousOf(d: Detection, previous: Detection[]): Detection | undefined {
  if (d.track_id !== undefined) return previous.find((p) => p.c === d.c && p.track_id === d.track_id);
  let best: Detection | undefined;
  let bestIou = SAME_OBJECT_IOU;
  for (const p of previous) {
    if (p.c !== d.c) continue;
    const o = iou(box(d), box(p));
    if (o >= bestIou) [best, bestIou] = [p, o];
  }
  return best;
}

function moved(d: Detection, previous: Detection[]): boolean {
  const p = previousOf(d, previous);
  if (!p) return true; // appeared
  const [a, b] = [box(d), box(p)];
  const shift = Math.hypot((a[0] + a[2] - b[0] - b[2]) / 2, (a[1] + a[3] - b[1] - b[3]) / 2);
  return shift > Math.max(MIN_MOVE_PX, MOVE_SHARE * Math.hypot(b[2] - b[0], b[3] - b[1]));
}

const round = (n: number, places: number) => String(Math.round(n * 10 ** places) / 10 ** places);

/**
 * Turns detection batches into ONVIF events: a person event per class-0 detection, IsPeople (true as
 * soon as a person is seen, false once `holdMs` of batches passed without one) and IsMotion (true
 * when a box appears or moves between consecutive batches, false once `holdMs` passed without that).
 * Time is the batches' own `atMs`, so the states follow the frames, not the wall clock.
 */
export class DetectionEvents {
  private isPeople = false;
  private isMotion = false;
  private lastPersonAtMs = -Infinity;
  private lastMotionAtMs = -Infinity;
  private previous: Detection[] = [];
  private lastAtMs = -Infinity;

  constructor(private readonly opts: DetectionEventsOptions) {}

  /** True while a property would still change without new detections (the owner keeps a timer for it). */
  get active(): boolean {
    return this.isPeople || this.isMotion;
  }

  /** The time of the latest batch, for an owner that decays the states when batches stop. */
  get latestAtMs(): number {
    return this.lastAtMs;
  }

  update(dets: Detection[], atMs: number): EventMessage[] {
    this.lastAtMs = Math.max(this.lastAtMs, atMs);
    const valid = dets.filter((d) => d.b.length >= 4);
    const persons = valid.filter((d) => d.c === PERSON_CLASS);
    const out: EventMessage[] = [];

    if (persons.length) this.lastPersonAtMs = atMs;
    const people = persons.length > 0 || atMs - this.lastPersonAtMs < this.opts.holdMs;
    if (people !== this.isPeople) {
      this.isPeople = people;
      out.push(this.peopleMessage(atMs, 'Changed'));
    }
    for (const d of persons) out.push(this.personMessage(d, atMs));

    if (valid.some((d) => moved(d, this.previous))) this.lastMotionAtMs = atMs;
    this.previous = valid;
    const motion = atMs - this.lastMotionAtMs < this.opts.holdMs;
    if (motion !== this.isMotion) {
      this.isMotion = motion;
      out.push(this.motionMessage(atMs, 'Changed'));
    }
    return out;
  }

  /** The current state of every property topic, for a new subscription or a SetSynchronizationPoint. */
  states(atMs: number): EventMessage[] {
    return [this.peopleMessage(atMs, 'Initialized'), this.motionMessage(atMs, 'Initialized')];
  }

  private ruleSource(rule: string): Array<[string, string]> {
    return [
      ['VideoSourceConfigurationToken', this.opts.sourceToken],
      ['VideoAnalyticsConfigurationToken', 'Analytics_1'],
      ['Rule', rule],
    ];
  }

  private peopleMessage(atMs: number, operation: 'Initialized' | 'Changed'): EventMessage {
    return { topic: TOPIC.people, utcMs: atMs, operation, source: this.ruleSource('PeopleDetector'), data: [['IsPeople', String(this.isPeople)]] };
  }

  private motionMessage(atMs: number, operation: 'Initialized' | 'Changed'): EventMessage {
    return { topic: TOPIC.motion, utcMs: atMs, operation, source: this.ruleSource('MotionDetector'), data: [['IsMotion', String(this.isMotion)]] };
  }

  private personMessage(d: Detection, atMs: number): EventMessage {
    const p = round(d.p, 4);
    const data: Array<[string, string]> = [
      [
        'b',
        box(d)
          .map((n) => round(n, 1))
          .join(','),
      ],
      ['p', p],
      ['conf', p],
    ];
    if (d.track_id !== undefined) data.push(['track_id', String(d.track_id)]);
    return { topic: TOPIC.person, utcMs: atMs, source: this.ruleSource('ObjectDetector'), data };
  }
}
