import { createSocket, type Socket } from 'node:dgram';
import { isIPv6 } from 'node:net';

/**
 * The server's RTP/RTCP UDP pair (RTP on an even port, RTCP on the next, RFC 3550 11), bound on the
 * RTSP listen address. Tries a few free even ports; a pair it cannot get leaves UDP off (SETUP then
 * offers TCP only with 461).
 */
export async function bindUdpPair(host: string, attempts = 20): Promise<{ rtp: Socket; rtcp: Socket } | undefined> {
  const type = isIPv6(host) ? 'udp6' : 'udp4';
  for (let i = 0; i < attempts; i++) {
    const rtp = createSocket(type);
    try {
      await bind(rtp, host, 0);
      const port = rtp.address().port;
      if (port % 2 !== 0 || port >= 65_535) {
        rtp.close();
        continue;
      }
      const rtcp = createSocket(type);
      try {
        await bind(rtcp, host, port + 1);
        return { rtp, rtcp };
      } catch {
        rtcp.close();
        rtp.close();
      }
    } catch {
      rtp.close();
    }
  }
  return undefined;
}

function bind(socket: Socket, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(port, host, () => {
      socket.off('error', reject);
      resolve();
    });
  });
}
