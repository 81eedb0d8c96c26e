import { randomBytes } from 'node:crypto';
import type { Element } from '@xmldom/xmldom';
import type { Detection } from 'lookout/core/contracts';
import type { Logger } from 'lookout/core';
import { declare, xmlEscape } from '../soap/namespaces.js';
import { faults, SoapFault } from '../soap/soap-fault.js';
import { DetectionEvents } from './detection-events.js';
import { CONCRETE_SET, notificationXml, type EventMessage } from './event-message.js';
import { deliverLoop, type DeliveryOptions } from './notify-delivery.js';
import { PullPoint, subscriptionGone } from './pull-point.js';
import { parseDuration, parseTerminationTime, utc } from './times.js';
import { topicFilter, topicSetDeclarations, topicSetXml, TOPIC, type TopicFilter } from './topics.js';
import { child, childElements, textOf } from './xml-read.js';

export interface OnvifEventsOptions {
  now(): number;
  maxSubscriptions: number;
  /** Subscriptions one client (`RequestInfo.client`: user and remote address) may hold at once (default: all of them). */
  maxSubscriptionsPerClient?: number;
  /** How often expired subscriptions are looked for while nothing else happens (default 5000). */
  sweepIntervalMs?: number;
  /** The address a subscription's requests go to; its path ends in `/subscription/<id>`. */
  subscriptionUrl(id: string): string;
  log: Logger;
  /** IsPeople / IsMotion stay true this long after the last person / motion (default 3000). */
  holdMs?: number;
  /** With no detection batch for this long, IsPeople / IsMotion decay as if empty batches came (default 10000). */
  idleMs?: number;
  /** Messages one subscription keeps unpulled; older ones are dropped (default 200). */
  queueLimit?: number;
  /** The longest a PullMessages is held, whatever its Timeout asks (default 60000). */
  maxPullTimeoutMs?: number;
  /** Lifetime when CreatePullPointSubscription has no InitialTerminationTime (default 60000). */
  defaultLifetimeMs?: number;
  /** The longest lifetime granted; longer requests are shortened (default one day). */
  maxLifetimeMs?: number;
  /** VideoSourceConfigurationToken in rule-engine events' Source (default "VideoSourceConfig_1"). */
  sourceToken?: string;
  /** Basic Notification (Subscribe): the consumer address as a URL, or a fault when Notify may not go there. Unset: Subscribe is refused. */
  consumerAllowed?: (address: string) => URL;
  /** How Notify is delivered (default: 3 retries from 500 ms, 5 s per POST). */
  delivery?: Omit<DeliveryOptions, 'log'>;
}

const DEFAULT_MESSAGE_LIMIT = 100;

/**
 * The ONVIF Events service (ver10 events wsdl): GetEventProperties, GetServiceCapabilities and
 * real-time pull-point subscriptions (CreatePullPointSubscription, then PullMessages, Renew,
 * Unsubscribe, SetSynchronizationPoint at the subscription's own address). The HTTP server hands
 * it the body element; it answers the response body's content, every prefix declared on its root.
 */
export class OnvifEvents {
  private readonly subscriptions = new Map<string, PullPoint>();
  /** Basic Notification subscriptions: their delivery loop, stopped when they end. */
  private readonly pushers = new Map<string, AbortController>();
  private readonly detections: DetectionEvents;
  private readonly holdMs: number;
  private readonly idleMs: number;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly opts: OnvifEventsOptions) {
    this.holdMs = opts.holdMs ?? 3000;
    this.idleMs = opts.idleMs ?? 10_000;
    this.detections = new DetectionEvents({ holdMs: this.holdMs, sourceToken: opts.sourceToken ?? 'VideoSourceConfig_1' });
    // An abandoned subscription goes at its termination time even when no request and no event comes to sweep it.
    this.sweeper = setInterval(() => this.sweep(), opts.sweepIntervalMs ?? 5000);
    this.sweeper.unref();
  }

  /** Subscriptions held now. */
  get size(): number {
    return this.subscriptions.size;
  }

  /** `client` identifies who asks (user and remote address): it bounds how many subscriptions one client holds. */
  async handle(action: string, body: Element, path: string, signal: AbortSignal, client = ''): Promise<string> {
    if (this.closed) throw new SoapFault('Receiver', 'ter:Action', 'the events service is stopped');
    this.sweep();
    switch (action) {
      case 'GetEventProperties':
        return this.getEventProperties();
      case 'GetServiceCapabilities':
        return this.getServiceCapabilities();
      case 'CreatePullPointSubscription':
        return this.create(body, client);
      case 'Subscribe':
        return this.subscribe(body, client);
      case 'PullMessages': {
        const sub = this.subscriptionAt(path);
        if (this.pushers.has(sub.id)) throw faults.invalidArg('this subscription delivers by Notify; it has no pull point');
        return this.pullMessages(sub, body, signal);
      }
      case 'Renew':
        return this.renew(this.subscriptionAt(path), body);
      case 'Unsubscribe':
        return this.unsubscribe(this.subscriptionAt(path));
      case 'SetSynchronizationPoint':
        return this.synchronize(this.subscriptionAt(path));
      default:
        throw faults.actionNotSupported(action);
    }
  }

  onDetections(dets: Detection[], atMs: number): void {
    if (this.closed) return;
    this.publish(this.detections.update(dets, atMs));
    this.armIdleTimer();
  }

  configurationChanged(token: string, type: string): void {
    if (this.closed) return;
    this.publish([
      {
        topic: TOPIC.configurationChanged,
        utcMs: this.opts.now(),
        source: [
          ['Token', token],
          ['Type', type],
        ],
        data: [],
      },
    ]);
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.idleTimer);
    clearInterval(this.sweeper);
    for (const sub of this.subscriptions.values()) sub.end();
    for (const p of this.pushers.values()) p.abort();
    this.subscriptions.clear();
    this.pushers.clear();
  }

  // --- operations ---

  private getEventProperties(): string {
    const dialects = [CONCRETE_SET, 'http://docs.oasis-open.org/wsn/t-1/TopicExpression/Concrete'];
    return (
      `<tev:GetEventPropertiesResponse ${declare('tev', 'wsnt')} ${topicSetDeclarations()}>` +
      `<tev:TopicNamespaceLocation>http://www.onvif.org/onvif/ver10/topics/topicns.xml</tev:TopicNamespaceLocation>` +
      `<wsnt:FixedTopicSet>true</wsnt:FixedTopicSet>` +
      topicSetXml() +
      dialects.map((d) => `<wsnt:TopicExpressionDialect>${d}</wsnt:TopicExpressionDialect>`).join('') +
      `<tev:MessageContentFilterDialect>http://www.onvif.org/ver10/tev/messageContentFilter/ItemFilter</tev:MessageContentFilterDialect>` +
      `<tev:MessageContentSchemaLocation>http://www.onvif.org/onvif/ver10/schema/onvif.xsd</tev:MessageContentSchemaLocation>` +
      `</tev:GetEventPropertiesResponse>`
    );
  }

  private getServiceCapabilities(): string {
    // WSPullPointSupport is about WS-BaseNotification's CreatePullPoint, which this device does not offer;
    // ONVIF's CreatePullPointSubscription is always there.
    return (
      `<tev:GetServiceCapabilitiesResponse ${declare('tev')}><tev:Capabilities WSSubscriptionPolicySupport="false" ` +
      `WSPullPointSupport="false" WSPausableSubscriptionManagerInterfaceSupport="false" MaxNotificationProducers="0" ` +
      `MaxPullPoints="${this.opts.maxSubscriptions}" PersistentNotificationStorage="false"/></tev:GetServiceCapabilitiesResponse>`
    );
  }

  private create(body: Element, client: string): string {
    const now = this.opts.now();
    const filter = this.filterOf(body);
    const requested = textOf(child(body, 'InitialTerminationTime'));
    const terminationMs = this.terminationFrom(requested, now, 'InitialTerminationTime');
    this.admit(client);
    const id = randomBytes(12).toString('hex');
    const sub = new PullPoint(id, this.opts.subscriptionUrl(id), terminationMs, filter, this.opts.queueLimit ?? 200, client);
    this.subscriptions.set(id, sub);
    // ONVIF: a new subscription first receives the current state of every property (Initialized).
    sub.push(this.detections.states(now));
    this.opts.log.debug({ id, terminationTime: utc(terminationMs) }, 'ONVIF pull-point subscription created');
    return (
      `<tev:CreatePullPointSubscriptionResponse ${declare('tev', 'wsa', 'wsnt')}>` +
      `<tev:SubscriptionReference><wsa:Address>${xmlEscape(sub.url)}</wsa:Address></tev:SubscriptionReference>` +
      `<wsnt:CurrentTime>${utc(now)}</wsnt:CurrentTime><wsnt:TerminationTime>${utc(terminationMs)}</wsnt:TerminationTime>` +
      `</tev:CreatePullPointSubscriptionResponse>`
    );
  }

  /**
   * WS-BaseNotification Subscribe: the same queue as a pull point, emptied by POSTing wsnt:Notify to
   * the consumer (only to an address the policy allows), with retries; Renew and Unsubscribe at the
   * subscription's address. Pull and push subscriptions share the bounds.
   */
  private subscribe(body: Element, client: string): string {
    if (!this.opts.consumerAllowed) throw faults.actionNotSupported('Subscribe');
    const now = this.opts.now();
    const reference = child(body, 'ConsumerReference');
    const address = reference ? textOf(child(reference, 'Address')) : undefined;
    if (!address) throw faults.invalidArg('Subscribe needs ConsumerReference/Address');
    const consumer = this.opts.consumerAllowed(address);
    const filter = this.filterOf(body);
    const terminationMs = this.terminationFrom(textOf(child(body, 'InitialTerminationTime')), now, 'InitialTerminationTime');
    this.admit(client);
    const id = randomBytes(12).toString('hex');
    const sub = new PullPoint(id, this.opts.subscriptionUrl(id), terminationMs, filter, this.opts.queueLimit ?? 200, client);
    this.subscriptions.set(id, sub);
    const stop = new AbortController();
    this.pushers.set(id, stop);
    sub.push(this.detections.states(now));
    const d = this.opts.delivery ?? { retries: 3, retryDelayMs: 500, timeoutMs: 5000 };
    void deliverLoop(sub, consumer, { ...d, log: this.opts.log }, stop.signal).then((r) =>
      this.opts.log.debug({ id, ...r }, 'ONVIF Notify subscription ended'),
    );
    this.opts.log.debug({ id, consumer: consumer.origin, terminationTime: utc(terminationMs) }, 'ONVIF Notify subscription created');
    return (
      `<wsnt:SubscribeResponse ${declare('wsa', 'wsnt')}>` +
      `<wsnt:SubscriptionReference><wsa:Address>${xmlEscape(sub.url)}</wsa:Address></wsnt:SubscriptionReference>` +
      `<wsnt:CurrentTime>${utc(now)}</wsnt:CurrentTime><wsnt:TerminationTime>${utc(terminationMs)}</wsnt:TerminationTime>` +
      `</wsnt:SubscribeResponse>`
    );
  }

  /** Throws unless another subscription fits: all of them, and this client's share. */
  private admit(client: string): void {
    if (this.subscriptions.size >= this.opts.maxSubscriptions) {
      this.opts.log.warn({ max: this.opts.maxSubscriptions }, 'ONVIF pull-point subscription refused: all in use');
      throw new SoapFault('Receiver', 'ter:Action', `too many subscriptions (at most ${this.opts.maxSubscriptions})`, 500, 'ter:TooManySubscriptions');
    }
    // First come must not mean all taken: one client holds at most its share, the others keep theirs.
    const perClient = this.opts.maxSubscriptionsPerClient ?? this.opts.maxSubscriptions;
    let held = 0;
    for (const s of this.subscriptions.values()) if (s.client === client) held++;
    if (held >= perClient) {
      this.opts.log.warn({ client, max: perClient }, 'ONVIF pull-point subscription refused: this client holds its share');
      throw new SoapFault(
        'Receiver',
        'ter:Action',
        `too many subscriptions for this client (at most ${perClient}; Unsubscribe one or let it expire)`,
        500,
        'ter:TooManySubscriptions',
      );
    }
  }

  private async pullMessages(sub: PullPoint, body: Element, signal: AbortSignal): Promise<string> {
    const timeoutText = textOf(child(body, 'Timeout'));
    if (timeoutText === undefined) throw faults.invalidArg('PullMessages needs a Timeout');
    const timeoutMs = parseDuration(timeoutText);
    if (timeoutMs === undefined || timeoutMs < 0) throw faults.invalidArg(`Timeout "${timeoutText}" is not a non-negative xs:duration`);
    const limitText = textOf(child(body, 'MessageLimit'));
    const limit = limitText === undefined ? DEFAULT_MESSAGE_LIMIT : Number(limitText);
    if (!Number.isInteger(limit) || limit < 0) throw faults.invalidArg(`MessageLimit "${limitText}" is not a non-negative integer`);

    const messages = await sub.pull(limit, Math.min(timeoutMs, this.opts.maxPullTimeoutMs ?? 60_000), signal);
    return (
      `<tev:PullMessagesResponse ${declare('tev', 'wsnt', 'tt', 'tns1')}>` +
      `<tev:CurrentTime>${utc(this.opts.now())}</tev:CurrentTime><tev:TerminationTime>${utc(sub.terminationMs)}</tev:TerminationTime>` +
      messages.map(notificationXml).join('') +
      `</tev:PullMessagesResponse>`
    );
  }

  private renew(sub: PullPoint, body: Element): string {
    const now = this.opts.now();
    sub.terminationMs = this.terminationFrom(textOf(child(body, 'TerminationTime')), now, 'TerminationTime');
    return (
      `<wsnt:RenewResponse ${declare('wsnt')}><wsnt:TerminationTime>${utc(sub.terminationMs)}</wsnt:TerminationTime>` +
      `<wsnt:CurrentTime>${utc(now)}</wsnt:CurrentTime></wsnt:RenewResponse>`
    );
  }

  private unsubscribe(sub: PullPoint): string {
    this.remove(sub, 'unsubscribed');
    return `<wsnt:UnsubscribeResponse ${declare('wsnt')}/>`;
  }

  private synchronize(sub: PullPoint): string {
    sub.push(this.detections.states(this.opts.now()));
    return `<tev:SetSynchronizationPointResponse ${declare('tev')}/>`;
  }

  // --- helpers ---

  /** The subscription a request path (`…/subscription/<id>`) addresses; a fault when it is unknown or expired. */
  private subscriptionAt(path: string): PullPoint {
    const m = /\/subscription\/([^/?#]+)/.exec(path);
    const id = m ? decodeURIComponent(m[1]) : '';
    const sub = this.subscriptions.get(id);
    if (!sub) throw subscriptionGone(id);
    return sub;
  }

  /** A requested termination time as an absolute time: absent → the default lifetime; past → fault; too far → clamped. */
  private terminationFrom(text: string | undefined, now: number, what: string): number {
    const maxMs = now + (this.opts.maxLifetimeMs ?? 86_400_000);
    if (text === undefined) return Math.min(now + (this.opts.defaultLifetimeMs ?? 60_000), maxMs);
    const at = parseTerminationTime(text, now);
    if (at === undefined) throw faults.invalidArg(`${what} "${text}" is neither an xs:duration nor an xs:dateTime`);
    if (at <= now) throw faults.invalidArg(`${what} "${text}" is not in the future`);
    return Math.min(at, maxMs);
  }

  /** The subscription's topic filter from Filter/TopicExpression; MessageContent filters are not applied. */
  private filterOf(body: Element): TopicFilter | undefined {
    const filter = child(body, 'Filter');
    if (!filter) return undefined;
    const expressions = childElements(filter).filter((e) => e.localName === 'TopicExpression');
    if (!expressions.length) return undefined;
    const parts: TopicFilter[] = [];
    for (const e of expressions) {
      const text = textOf(e) ?? '';
      const f = topicFilter(text, e.getAttribute('Dialect') || undefined, (prefix) => e.lookupNamespaceURI(prefix));
      if (!f) throw faults.invalidArg(`TopicExpression "${text}" is not understood (dialect or prefix)`);
      parts.push(f);
    }
    return (topic) => parts.some((f) => f(topic));
  }

  private publish(messages: EventMessage[]): void {
    if (!messages.length) return;
    this.sweep();
    for (const sub of this.subscriptions.values()) sub.push(messages);
  }

  /** Expired subscriptions go: their address answers a fault from then on. */
  private sweep(): void {
    const now = this.opts.now();
    for (const sub of this.subscriptions.values()) if (sub.terminationMs <= now) this.remove(sub, 'expired');
  }

  private remove(sub: PullPoint, why: string): void {
    this.subscriptions.delete(sub.id);
    sub.end();
    this.pushers.get(sub.id)?.abort();
    this.pushers.delete(sub.id);
    this.opts.log.debug({ id: sub.id, dropped: sub.dropped }, `ONVIF pull-point subscription ${why}`);
  }

  /**
   * When detection batches stop (detector suspended, camera gone) IsPeople / IsMotion would stay true
   * for ever: after `idleMs` without a batch they decay as if an empty batch had come.
   */
  private armIdleTimer(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    if (!this.detections.active) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      if (this.closed) return;
      this.publish(this.detections.update([], this.detections.latestAtMs + Math.max(this.idleMs, this.holdMs)));
      this.armIdleTimer();
    }, this.idleMs);
    this.idleTimer.unref();
  }
}
