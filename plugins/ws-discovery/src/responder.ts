import DgramAsPromised, { type RemoteInfo, type SocketAsPromised } from 'dgram-as-promised';
import { KeyedRateLimiter } from 'lookout/lib/limits';
import type { Logger } from 'lookout/core';
import { bye, hello, probeMatch, type AppSequence, type Endpoint } from './messages.js';
import { matchesProbe } from './matching.js';
import { announceAddresses, announceHost, answersSender, replyAddress, replyHost, urlHost, type NetworkPlan } from './network-plan.js';
import { parseProbe } from './probe.js';
import { RecentIds } from './recent-ids.js';

export const DISCOVERY_GROUP = '239.255.255.250';

export interface ResponderOptions {
  /** UDP port (3702 on a device); shared with other responders on the machine (address reuse). */
  port: number;
  plan: NetworkPlan;
  endpoint: Endpoint;
  /** The device service address for a host the client reaches the device at. */
  xaddr(host: string): string;
  dedupMs: number;
  maxDatagramBytes: number;
  /** Datagrams per second read from one sender address (4× as many back to back). */
  sourceRate: number;
  /** ProbeMatches per second in all (4× as many back to back). */
  answerRate: number;
  /** Monotonic milliseconds (the rate limits). */
  monotonicNow(): number;
  now(): number;
  log: Logger;
}

/** Counters, for health and tests. */
export interface ResponderStats {
  answered: number;
  repeated: number;
  /** Probes for something else (another type or scope), or from a sender the plan does not answer. */
  unmatched: number;
  /** Datagrams that are not a Probe: other discovery messages, malformed or oversized ones. */
  ignored: number;
  /** Datagrams dropped unread past their sender's rate, and probes left unanswered past the answer rate. */
  limited: number;
}

/** How many of a rate's datagrams may come back to back (a client probes up to three times, for two types). */
const BURST_SECONDS = 4;

/**
 * The WS-Discovery target service: answers Probes with one unicast ProbeMatch, announces Hello and
 * Bye on the group. Sends go one at a time, because with several interfaces each announcement
 * selects its outgoing interface on the shared socket first.
 */
export class WsDiscoveryResponder {
  readonly stats: ResponderStats = { answered: 0, repeated: 0, unmatched: 0, ignored: 0, limited: 0 };
  private socket: SocketAsPromised | undefined;
  private readonly recent: RecentIds;
  private readonly perSource: KeyedRateLimiter;
  private readonly answers: KeyedRateLimiter;
  private readonly sequence: AppSequence;
  private sending: Promise<void> = Promise.resolve();
  private closed = false;
  /** Joined the group: only then is there anything to say Bye for. */
  private joined = false;

  constructor(private readonly o: ResponderOptions) {
    this.recent = new RecentIds(o.dedupMs);
    // Keyed by address, not address and port: one host has 64 000 ports to send from.
    this.perSource = new KeyedRateLimiter({ burst: Math.ceil(o.sourceRate * BURST_SECONDS), perSecond: o.sourceRate, maxKeys: 4096 });
    this.answers = new KeyedRateLimiter({ burst: Math.ceil(o.answerRate * BURST_SECONDS), perSecond: o.answerRate });
    this.sequence = { instanceId: Math.floor(o.now() / 1000), messageNumber: 0 };
  }

  /** Binds, joins the group; resolves to the bound port. */
  async start(): Promise<number> {
    // The callback form keeps a 'message' listener attached for good: recv() would miss datagrams
    // that arrive while an answer is being sent.
    const socket = DgramAsPromised.createSocket({ type: 'udp4', reuseAddr: true }, (msg, rinfo) => this.onDatagram(msg, rinfo));
    socket.socket.on('error', (err) => this.o.log.warn({ err: err.message }, 'ws-discovery socket error'));
    this.socket = socket;
    // Bound on every address: a socket bound to a unicast address does not receive group traffic.
    const { port } = await socket.bind({ port: this.o.port, address: '0.0.0.0', exclusive: false });
    socket.setMulticastTTL(1);
    socket.setMulticastLoopback(true);
    const interfaces = announceAddresses(this.o.plan);
    for (const address of interfaces) socket.addMembership(DISCOVERY_GROUP, address);
    socket.setMulticastInterface(interfaces[0]);
    this.joined = true;
    return port;
  }

  /** Multicast Hello on each announcing interface, with the XAddrs reachable there. */
  hello(): Promise<void> {
    return this.announce((address) => hello(this.o.endpoint, [this.o.xaddr(urlHost(announceHost(this.o.plan, address)))], this.next()));
  }

  /** Bye, then the socket closes. */
  async close(): Promise<void> {
    if (this.closed || !this.socket) return;
    if (this.joined) await this.announce(() => bye(this.o.endpoint, this.next()));
    this.closed = true;
    await this.sending;
    await this.socket.close().catch(() => undefined);
  }

  private next(): AppSequence {
    this.sequence.messageNumber += 1;
    return { ...this.sequence };
  }

  private announce(message: (address: string) => string): Promise<void> {
    const socket = this.socket;
    if (!socket || !this.joined || this.closed) return Promise.resolve();
    let done = Promise.resolve();
    for (const address of announceAddresses(this.o.plan)) {
      done = this.send(async () => {
        socket.setMulticastInterface(address);
        // Announcements go to the discovery port (a free port, 0, is only for tests without multicast).
        await socket.send(Buffer.from(message(address)), this.o.port || 3702, DISCOVERY_GROUP);
      });
    }
    return done;
  }

  private send(job: () => Promise<void>): Promise<void> {
    this.sending = this.sending.then(job).catch((err: Error) => this.o.log.warn({ err: err.message }, 'ws-discovery send failed'));
    return this.sending;
  }

  private onDatagram(msg: Buffer, rinfo: RemoteInfo): void {
    if (this.closed) return;
    if (this.perSource.take(rinfo.address, this.o.monotonicNow()) === false) {
      this.stats.limited += 1;
      return;
    }
    const probe = msg.length <= this.o.maxDatagramBytes ? parseProbe(msg.toString('utf8')) : null;
    if (!probe) {
      this.stats.ignored += 1;
      return;
    }
    if (!answersSender(this.o.plan, rinfo.address) || !matchesProbe(probe, this.o.endpoint.scopes)) {
      this.stats.unmatched += 1;
      return;
    }
    if (!this.recent.firstTime(probe.messageId, this.o.now())) {
      this.stats.repeated += 1;
      return;
    }
    if (this.answers.take('', this.o.monotonicNow()) === false) {
      this.stats.limited += 1;
      return;
    }
    this.stats.answered += 1;
    const socket = this.socket!;
    const to = replyAddress(rinfo.address);
    const xaddrs = [this.o.xaddr(urlHost(replyHost(this.o.plan, to)))];
    void this.send(async () => {
      await socket.send(Buffer.from(probeMatch(this.o.endpoint, probe.messageId, xaddrs, this.next())), rinfo.port, to);
    });
  }
}
