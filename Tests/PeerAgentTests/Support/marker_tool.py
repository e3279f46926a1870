#!/usr/bin/env python3
"""The test's own, independent reading of end-to-end video latency and missing frames,
for MarkerQualityTests — nothing here uses `peer`'s code.

  marker_tool.py sniff --iface lo --out FILE [--seconds S]
      Capture UDP datagrams that look like RTP (version 2, payload type 96-127) on
      the interface with an AF_PACKET socket and the kernel's receive time
      (SO_TIMESTAMPNS); write one JSON line per datagram: {"t": ms since the Unix
      epoch, "ssrc", "seq", "ts", "m": marker bit}. Prints {"ready": true} once
      capturing; stops after S seconds or on SIGTERM. Each datagram is kept once.
  marker_tool.py markers FILE.ivf
      Decode the IVF with ffmpeg (libvpx's VP8 decoder) to grey frames and read each
      frame's marker (peer's test pattern: 112 cells of the top band — frame number
      u32, capture time ms s48, CRC-32 ^ 0x50454552 — as docs/USAGE.md "The test pattern" says);
      print {"frames": N, "read": [[index, pts, number, captureMs]...], "gaps": G}
      where G counts frame numbers between the first and last read that no frame has.
  marker_tool.py latency --ivf FILE.ivf --packets FILE --ssrc N
      Join the IVF's frames to the captured packets of `ssrc` whose marker bit is set
      (a frame's last packet) by RTP timestamp (IVF pts + the first frame's RTP
      timestamp); latency = the packet's arrival − the marker's capture time. Prints
      {"matched", "frames", "p50", "p95"} (ms).
"""
import argparse, json, os, select, signal, socket, struct, subprocess, sys, time, zlib

MAGIC = 0x50454552


def sniff(a):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    s.bind((a.iface, 0))
    s.setsockopt(socket.SOL_SOCKET, 35, 1)  # SO_TIMESTAMPNS
    stop = [False]
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__(0, True))
    seen = set()
    end = time.monotonic() + a.seconds
    print(json.dumps({"ready": True}), flush=True)
    with open(a.out, "w") as out:
        while not stop[0] and time.monotonic() < end:
            r, _, _ = select.select([s], [], [], 0.2)
            if not r:
                continue
            data, anc, _, addr = s.recvmsg(65536, 1024)
            t = None
            for level, kind, value in anc:
                if level == socket.SOL_SOCKET and kind == 35:
                    sec, nsec = struct.unpack("qq", value[:16])
                    t = sec * 1000 + nsec / 1e6
            if t is None:
                t = time.time() * 1000
            # Ethernet header (loopback has one too: 14 bytes), IPv4 or IPv6 (no extension
            # headers), UDP.
            kind = data[12:14]
            if kind == b"\x08\x00" and len(data) >= 34 and data[14 + 9] == 17:
                udp = data[14 + (data[14] & 0x0F) * 4:]
            elif kind == b"\x86\xdd" and len(data) >= 54 and data[14 + 6] == 17:
                udp = data[54:]
            else:
                continue
            rtp = udp[8:]
            if len(rtp) < 12 or rtp[0] >> 6 != 2 or not 96 <= (rtp[1] & 0x7F) <= 127:
                continue
            seq, ts, ssrc = struct.unpack("!HII", rtp[2:12])
            key = (ssrc, seq, ts)
            if key in seen:  # loopback shows a datagram going out and coming in
                continue
            seen.add(key)
            out.write(json.dumps({"t": t, "ssrc": ssrc, "seq": seq, "ts": ts, "m": rtp[1] >> 7}) + "\n")
            out.flush()


def ivf_frames(path):
    """(pts, payload) of each IVF frame, and the header's width and height."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"DKIF":
        raise SystemExit(f"{path}: not an IVF file")
    hlen = struct.unpack("<H", data[6:8])[0]
    width, height = struct.unpack("<HH", data[12:16])
    frames, off = [], hlen
    while off + 12 <= len(data):
        size, pts = struct.unpack("<IQ", data[off:off + 12])
        frames.append((pts, data[off + 12:off + 12 + size]))
        off += 12 + size
    return frames, width, height


def read_marker(luma, w, h):
    for cell in (16, 8, 4):
        per_row = w // cell
        rows = (112 + per_row - 1) // per_row
        if per_row and rows * cell <= h // 4:
            break
    else:
        return None
    inset, inner = cell // 4, cell // 2
    bits = []
    for i in range(112):
        x0 = (i % per_row) * cell + inset
        y0 = (i // per_row) * cell + inset
        total = sum(sum(luma[(y0 + y) * w + x0:(y0 + y) * w + x0 + inner]) for y in range(inner))
        mean = total / (inner * inner)
        if abs(mean - 125.5) < 45:
            return None
        bits.append(1 if mean > 125.5 else 0)
    raw = bytes(int("".join(map(str, bits[i:i + 8])), 2) for i in range(0, 112, 8))
    if int.from_bytes(raw[10:14], "big") != zlib.crc32(raw[:10]) ^ MAGIC:
        return None
    number = int.from_bytes(raw[0:4], "big")
    t = int.from_bytes(raw[4:10], "big")
    if t >= 1 << 47:
        t -= 1 << 48
    return number, t


def markers(path):
    frames, w, h = ivf_frames(path)
    r = subprocess.run(["ffmpeg", "-v", "error", "-c:v", "libvpx", "-i", path, "-fps_mode", "passthrough",
                        "-f", "rawvideo", "-pix_fmt", "gray", "-"], capture_output=True)
    size = w * h
    count = len(r.stdout) // size
    read = []
    for k in range(count):
        m = read_marker(r.stdout[k * size:(k + 1) * size], w, h)
        if m:
            read.append([k, frames[k][0] if count == len(frames) else None, m[0], m[1]])
    numbers = sorted({x[2] for x in read})
    gaps = (numbers[-1] - numbers[0] + 1 - len(numbers)) if numbers else 0
    return {"frames": len(frames), "decoded": count, "read": read, "gaps": gaps}


def latency(a):
    m = markers(a.ivf)
    packets = [json.loads(l) for l in open(a.packets)]
    ends = [p for p in packets if p["ssrc"] == a.ssrc and p["m"] == 1]
    if not ends or not m["read"] or m["read"][0][1] is None:
        return {"matched": 0, "frames": m["frames"], "decoded": m["decoded"]}
    first = ends[0]["ts"]
    by_ts = {}
    for p in ends:
        by_ts.setdefault(p["ts"], p["t"])
    lat = []
    for _, pts, number, capture in m["read"]:
        t = by_ts.get((first + pts) & 0xFFFFFFFF)
        if t is not None:
            lat.append(t - capture)
    lat.sort()
    pick = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] if lat else None
    return {"matched": len(lat), "frames": m["frames"], "decoded": m["decoded"], "p50": pick(0.5), "p95": pick(0.95)}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sniff"); s.add_argument("--iface", default="lo"); s.add_argument("--out", required=True)
    s.add_argument("--seconds", type=float, default=120)
    k = sub.add_parser("markers"); k.add_argument("ivf")
    l = sub.add_parser("latency"); l.add_argument("--ivf", required=True); l.add_argument("--packets", required=True)
    l.add_argument("--ssrc", type=int, required=True)
    a = p.parse_args()
    if a.command == "sniff":
        sniff(a)
    elif a.command == "markers":
        r = markers(a.ivf)
        print(json.dumps(r))
    else:
        print(json.dumps(latency(a)))


if __name__ == "__main__":
    main()
