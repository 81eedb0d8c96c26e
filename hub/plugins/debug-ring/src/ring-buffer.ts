/**
 * A FIFO bounded in count and, optionally, in total weight (the bytes of what it holds): pushing
 * past either bound drops the oldest items first. An item heavier than the whole budget is still
 * held, alone; callers cut items down before they push them.
 */
export class RingBuffer<T> {
  private readonly items: (T | undefined)[];
  private readonly weights: Float64Array;
  private start = 0;
  private length = 0;
  private weight = 0;
  dropped = 0;

  constructor(
    readonly capacity: number,
    readonly maxWeight = Infinity,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`ring capacity must be a positive integer, got ${capacity}`);
    if (!(maxWeight > 0)) throw new RangeError(`ring weight bound must be positive, got ${maxWeight}`);
    this.items = new Array<T | undefined>(capacity);
    this.weights = new Float64Array(capacity);
  }

  get size(): number {
    return this.length;
  }

  /** Total weight of the items held. */
  get held(): number {
    return this.weight;
  }

  push(item: T, weight = 0): void {
    while (this.length > 0 && (this.length >= this.capacity || this.weight + weight > this.maxWeight)) this.dropOldest();
    const i = (this.start + this.length) % this.capacity;
    this.items[i] = item;
    this.weights[i] = weight;
    this.weight += weight;
    this.length++;
  }

  /** Oldest first. */
  toArray(): T[] {
    const out: T[] = new Array<T>(this.length);
    for (let i = 0; i < this.length; i++) out[i] = this.items[(this.start + i) % this.capacity] as T;
    return out;
  }

  private dropOldest(): void {
    this.weight -= this.weights[this.start];
    this.items[this.start] = undefined;
    this.weights[this.start] = 0;
    this.start = (this.start + 1) % this.capacity;
    this.length--;
    this.dropped++;
  }
}
