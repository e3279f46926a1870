#!/usr/bin/env python3
"""aiortc's side of `peer-bench data`: two aiortc peer connections in one process over
127.0.0.1, no media (run with the aiortc venv's python).

    aiortc_data_bench.py [--messages 200] [--size 16384] [--pings 1000]

A sends MESSAGES messages of SIZE bytes on a reliable ordered channel "bulk" (at most
1 MiB buffered) and B counts them: MB/s from the first to the last arrival. Then PINGS
100-byte messages, one at a time, on "echo", which B sends back from its message handler:
the median and 99th percentile round trip. One JSON line:

  {"aiortc": VERSION, "throughputMBps": …, "bytes": …, "seconds": …, "rttMedianMs": …, "rttP99Ms": …}
"""
import argparse
import asyncio
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from aiortc_peer import add_loopback  # noqa: E402
import aiortc  # noqa: E402
from aiortc import RTCConfiguration, RTCPeerConnection  # noqa: E402


async def run(args):
    add_loopback()
    a, b = RTCPeerConnection(RTCConfiguration(iceServers=[])), RTCPeerConnection(RTCConfiguration(iceServers=[]))
    bulk, echo = a.createDataChannel("bulk"), a.createDataChannel("echo")
    received = {"bytes": 0, "first": None, "last": None}
    total = args.messages * args.size
    all_in, opened, pong = asyncio.Event(), asyncio.Event(), asyncio.Queue()

    @b.on("datachannel")
    def on_channel(ch):
        @ch.on("message")
        def on_message(m):
            if ch.label == "echo":
                ch.send(m)
                return
            t = time.monotonic()
            received["first"] = received["first"] or t
            received["last"] = t
            received["bytes"] += len(m)
            if received["bytes"] >= total:
                all_in.set()

    @echo.on("message")
    def on_pong(m):
        pong.put_nowait(time.monotonic())

    @echo.on("open")
    def on_open():
        opened.set()

    await a.setLocalDescription(await a.createOffer())
    await b.setRemoteDescription(a.localDescription)
    await b.setLocalDescription(await b.createAnswer())
    await a.setRemoteDescription(b.localDescription)
    await asyncio.wait_for(opened.wait(), 30)
    while bulk.readyState != "open":
        await asyncio.sleep(0.01)
    payload = bytes(args.size)
    for _ in range(args.messages):
        while bulk.bufferedAmount > (1 << 20):
            await asyncio.sleep(0.001)
        bulk.send(payload)
    await asyncio.wait_for(all_in.wait(), 120)
    seconds = max(received["last"] - received["first"], 1e-6)
    rtts = []
    ping = bytes(100)
    for _ in range(args.pings):
        start = time.monotonic()
        echo.send(ping)
        rtts.append((await asyncio.wait_for(pong.get(), 5) - start) * 1000)
    rtts.sort()
    print(json.dumps({"aiortc": aiortc.__version__, "throughputMBps": round(received["bytes"] / seconds / 1e6, 3),
                      "bytes": received["bytes"], "seconds": round(seconds, 4), "rttMedianMs": round(rtts[len(rtts) // 2], 3),
                      "rttP99Ms": round(rtts[min(len(rtts) - 1, len(rtts) * 99 // 100)], 3)}), flush=True)
    await a.close()
    await b.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--messages", type=int, default=200)
    p.add_argument("--size", type=int, default=16384)
    p.add_argument("--pings", type=int, default=1000)
    asyncio.run(run(p.parse_args()))


if __name__ == "__main__":
    main()
