import { request } from 'node:http';
import { BlockList, isIPv4 } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { Logger } from 'lookout/core';
import { declare } from '../soap/namespaces.js';
import { faults } from '../soap/soap-fault.js';
import { notificationXml } from './event-message.js';
import type { PullPoint } from './pull-point.js';

/**
 * Which consumer addresses Notify may be sent to: loopback, the networks of the device's own
 * interfaces, and the networks configured beside them. Only an IPv4 literal is taken (a name would
 * be resolved at each delivery and could point anywhere by then): the device never becomes a way to
 * reach arbitrary hosts.
 */
export function consumerPolicy(extraCidrs: string[] = [], interfaces = networkInterfaces()): (url: string) => URL {
  const allowed = new BlockList();
  allowed.addSubnet('127.0.0.0', 8, 'ipv4');
  for (const list of Object.values(interfaces)) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal && a.cidr) addCidr(allowed, a.cidr);
  }
  for (const c of extraCidrs) addCidr(allowed, c);
  return (text) => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw faults.invalidArg(`ConsumerReference "${text.slice(0, 200)}" is not a URL`);
    }
    if (url.protocol !== 'http:') throw faults.invalidArg('the consumer address must be an http:// URL');
    if (!isIPv4(url.hostname)) throw faults.invalidArg('the consumer address must name an IPv4 address, not a host name');
    if (!allowed.check(url.hostname, 'ipv4')) throw faults.invalidArg(`Notify is not sent to ${url.hostname}: only loopback and the device's own networks`);
    return url;
  };
}

function addCidr(list: BlockList, cidr: string): void {
  const [net, bits] = cidr.split('/');
  if (isIPv4(net) && Number.isInteger(Number(bits))) list.addSubnet(net, Number(bits), 'ipv4');
}

export interface DeliveryOptions {
  /** Tries after the first failed one, per batch. */
  retries: number;
  /** Delay before the first retry; doubled each time. */
  retryDelayMs: number;
  /** One POST's limit. */
  timeoutMs: number;
  log: Logger;
}

/**
 * Basic Notification: the messages of a subscription's queue POSTed to its consumer as wsnt:Notify,
 * a batch at a time, retried with backoff; a batch that fails every try is dropped (counted and
 * logged) so that a dead consumer does not hold the queue. Runs until the subscription ends.
 */
export async function deliverLoop(sub: PullPoint, consumer: URL, o: DeliveryOptions, signal: AbortSignal): Promise<{ delivered: number; dropped: number }> {
  let delivered = 0;
  let dropped = 0;
  for (;;) {
    let batch;
    try {
      batch = await sub.pull(100, 60_000, signal);
    } catch {
      return { delivered, dropped }; // the subscription ended
    }
    if (signal.aborted) return { delivered, dropped };
    if (batch.length === 0) continue;
    const xml =
      `<?xml version="1.0" encoding="UTF-8"?>\n<env:Envelope ${declare('env', 'wsa', 'wsnt', 'tt', 'tns1')}>` +
      `<env:Header><wsa:Action>http://docs.oasis-open.org/wsn/bw-2/NotificationConsumer/Notify</wsa:Action><wsa:To>${consumer.href.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</wsa:To></env:Header>` +
      `<env:Body><wsnt:Notify>${batch.map(notificationXml).join('')}</wsnt:Notify></env:Body></env:Envelope>`;
    let ok = false;
    for (let attempt = 0; attempt <= o.retries && !signal.aborted; attempt++) {
      if (attempt > 0) await sleep(o.retryDelayMs * 2 ** (attempt - 1), signal);
      ok = await post(consumer, xml, o.timeoutMs, signal);
      if (ok) break;
    }
    if (ok) delivered += batch.length;
    else {
      dropped += batch.length;
      o.log.warn({ consumer: consumer.origin, messages: batch.length, tries: o.retries + 1 }, 'ONVIF Notify not delivered: messages dropped');
    }
  }
}

function post(url: URL, xml: string, timeoutMs: number, signal: AbortSignal): Promise<boolean> {
  const body = Buffer.from(xml, 'utf8');
  return new Promise((resolve) => {
    const req = request(
      url,
      { method: 'POST', signal, timeout: timeoutMs, headers: { 'Content-Type': 'application/soap+xml; charset=utf-8', 'Content-Length': body.length } },
      (res) => {
        res.resume();
        res.on('end', () => resolve((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300));
        res.on('error', () => resolve(false));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', () => resolve(false));
    req.end(body);
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
