#!/usr/bin/env python3
"""A UDP relay that delays one direction, for MarkerQualityTests (this kernel has no netem).

  udp_delay.py --to HOST:PORT --delay-ms MS [--listen HOST] [--seconds S]

Listens on a free UDP port of --listen (default 127.0.0.1) and prints {"port": N}. Each
client address gets its own socket towards --to: what a client sends reaches --to MS
milliseconds later (held in order on a timer heap, sent by the same thread); what comes
back is passed on at once. Put in front of a TURN server, it adds MS to the one-way
delay of everything a relay-only client sends. Runs for S seconds (default 300) or until
SIGTERM; prints {"forwarded": N, "returned": M} at the end.
"""
import argparse, heapq, json, select, signal, socket, time


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--to", required=True)
    p.add_argument("--delay-ms", type=float, required=True)
    p.add_argument("--listen", default="127.0.0.1")
    p.add_argument("--seconds", type=float, default=300)
    a = p.parse_args()
    host, port = a.to.rsplit(":", 1)
    upstream = (host, int(port))
    front = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    front.bind((a.listen, 0))
    print(json.dumps({"port": front.getsockname()[1]}), flush=True)
    stop = [False]
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__(0, True))
    by_client, by_socket = {}, {}
    pending, order = [], 0
    forwarded = returned = 0
    end = time.monotonic() + a.seconds
    while not stop[0] and time.monotonic() < end:
        now = time.monotonic()
        while pending and pending[0][0] <= now:
            _, _, sock, data = heapq.heappop(pending)
            sock.send(data)
            forwarded += 1
        timeout = max(0.0, min(0.2, pending[0][0] - now)) if pending else 0.2
        ready, _, _ = select.select([front] + list(by_socket), [], [], timeout)
        for s in ready:
            if s is front:
                data, client = front.recvfrom(65536)
                sock = by_client.get(client)
                if sock is None:
                    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                    sock.connect(upstream)
                    by_client[client] = sock
                    by_socket[sock] = client
                order += 1
                heapq.heappush(pending, (time.monotonic() + a.delay_ms / 1000, order, sock, data))
            else:
                try:
                    data = s.recv(65536)
                except OSError:
                    continue
                front.sendto(data, by_socket[s])
                returned += 1
    print(json.dumps({"forwarded": forwarded, "returned": returned}), flush=True)


if __name__ == "__main__":
    main()
