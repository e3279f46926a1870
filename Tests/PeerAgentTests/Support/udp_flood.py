#!/usr/bin/env python3
"""udp_flood.py: floods a UDP port on 127.0.0.1 for the flood tests of `peer`.

  udp_flood.py --to PORT --mode garbage|spoofed-garbage|rtp [--from-port P]
               [--mbps 100] [--seconds 5] [--size 1200] [--seed 1]

garbage          random bytes from a fresh socket (an address that is no remote candidate)
spoofed-garbage  random bytes with source 127.0.0.1:--from-port (a raw socket writes the
                 UDP header; needs root), so they arrive as if from the remote peer
rtp              valid-looking RTP (RFC 3550: version 2, payload type 96, a random SSRC
                 per packet, rising sequence numbers and timestamps, --size bytes with a
                 10-byte "auth tag" of random bytes) from 127.0.0.1:--from-port

Paced to --mbps (UDP payload bits) for --seconds. Prints one JSON line:
{"mode", "packets", "bytes", "seconds", "mbps", "errors", "lastError"} (what was sent; the
kernel may drop some at the receiver's socket buffer); exit 1 when more sends failed than
succeeded.
"""
import argparse, json, os, random, socket, struct, time


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--to", type=int, required=True)
    p.add_argument("--mode", choices=["garbage", "spoofed-garbage", "rtp"], required=True)
    p.add_argument("--from-port", type=int)
    p.add_argument("--mbps", type=float, default=100)
    p.add_argument("--seconds", type=float, default=5)
    p.add_argument("--size", type=int, default=1200)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    rng = random.Random(a.seed)
    spoofed = a.mode != "garbage"
    if spoofed:
        if not a.from_port:
            p.error("--from-port is needed for spoofed modes")
        sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_UDP)
    else:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    # A pool of payloads, so that making them does not limit the rate.
    pool = []
    for i in range(256):
        if a.mode == "rtp":
            header = struct.pack("!BBHII", 0x80, 96 | (0x80 if i % 8 == 7 else 0), 0, 0, rng.getrandbits(32))
            body = header + os.urandom(a.size - len(header))
        else:
            body = os.urandom(a.size)
        pool.append(bytearray(body))
    per_second = a.mbps * 1e6 / 8 / a.size
    sent = ok = errors = 0
    last_error = None
    start = time.monotonic()
    seq = rng.getrandbits(16)
    while True:
        elapsed = time.monotonic() - start
        if elapsed >= a.seconds:
            break
        due = int(per_second * elapsed) + 1
        while sent < due:
            body = pool[sent % len(pool)]
            if a.mode == "rtp":
                seq = (seq + 1) & 0xFFFF
                struct.pack_into("!HI", body, 2, seq, (seq * 3000) & 0xFFFFFFFF)
            try:
                if spoofed:
                    udp = struct.pack("!HHHH", a.from_port, a.to, 8 + len(body), 0)  # checksum 0: none (IPv4)
                    sock.sendto(udp + body, ("127.0.0.1", 0))
                else:
                    sock.sendto(body, ("127.0.0.1", a.to))
                ok += 1
            except OSError as e:  # ENOBUFS when the send queue is full; counted, not sent
                errors += 1
                last_error = str(e)
            sent += 1
        time.sleep(0.0005)
    seconds = time.monotonic() - start
    print(json.dumps({"mode": a.mode, "packets": ok, "bytes": ok * a.size, "seconds": round(seconds, 3),
                      "mbps": round(ok * a.size * 8 / seconds / 1e6, 1), "errors": errors, "lastError": last_error}),
          flush=True)
    raise SystemExit(1 if errors > ok else 0)

if __name__ == "__main__":
    main()
