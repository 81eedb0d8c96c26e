/**
 * Sets `obj[key]` as an own property whatever the key. Keys from the wire (device ids, topic
 * suffixes) may be `__proto__`, which as a plain assignment sets the object's prototype instead
 * and vanishes from the JSON answer. A plain assignment otherwise: answers with a thousand devices
 * are built per request.
 */
export function setOwn<T>(obj: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}
