#!/usr/bin/env python3
"""Two aiortc peer connections in one process calling each other over 127.0.0.1, the
counterpart of `peer loopback` for set-up benchmarks (run with the aiortc venv's python).

    aiortc_loopback.py [--width 320 --height 240 --timeout 30]

Each side sends the test pattern and a tone of aiortc_peer.py. The offer and answer are
handed over in-process (aiortc gathers before setLocalDescription returns: vanilla ICE).
Prints one JSON line and exits 0 when both sides reach connectionState "connected"
(ICE and DTLS done), 1 on failure or --timeout:

  {"connected": true, "iceConnectedMs": {"a": …, "b": …}, "dtlsConnectedMs": {"a": …, "b": …},
   "answerAppliedMs": …}

Times are ms from setLocalDescription(offer) on side a (monotonic clock), where `peer`'s
connection timings start too; dtlsConnectedMs is the time of
connectionState "connected", which aiortc reaches when its DTLS transport is connected.
"""
import argparse
import asyncio
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from aiortc_peer import Paced, PatternTrack, ToneTrack, add_loopback  # noqa: E402
from aiortc import RTCConfiguration, RTCPeerConnection  # noqa: E402


async def run(args):
    add_loopback()
    paced = Paced()
    pcs = {name: RTCPeerConnection(RTCConfiguration(iceServers=[])) for name in ("a", "b")}
    ice, dtls = {}, {}
    done = asyncio.Event()
    failed = []
    start = time.monotonic()

    def ms():
        return round((time.monotonic() - start) * 1000, 1)

    for name, pc in pcs.items():
        pc.addTrack(PatternTrack(paced, args.width, args.height))
        pc.addTrack(ToneTrack(paced, 440 if name == "a" else 660))

        def watch(name=name, pc=pc):
            @pc.on("iceconnectionstatechange")
            def _():
                if pc.iceConnectionState in ("connected", "completed") and name not in ice:
                    ice[name] = ms()

            @pc.on("connectionstatechange")
            def _():
                if pc.connectionState == "connected" and name not in dtls:
                    dtls[name] = ms()
                    if len(dtls) == 2:
                        done.set()
                elif pc.connectionState == "failed":
                    failed.append(name)
                    done.set()
        watch()

    a, b = pcs["a"], pcs["b"]
    offer = await a.createOffer()
    start = time.monotonic()  # as peer's timings: from setting the offer (gathering starts there)
    await a.setLocalDescription(offer)
    await b.setRemoteDescription(a.localDescription)
    await b.setLocalDescription(await b.createAnswer())
    await a.setRemoteDescription(b.localDescription)
    answered = ms()
    try:
        await asyncio.wait_for(done.wait(), args.timeout)
    except asyncio.TimeoutError:
        failed.append("timeout")
    ok = not failed and len(dtls) == 2
    print(json.dumps({"connected": ok, "failed": failed, "iceConnectedMs": ice, "dtlsConnectedMs": dtls,
                      "answerAppliedMs": answered}, sort_keys=True), flush=True)
    paced.stopped.set()
    for pc in pcs.values():
        await pc.close()
    return 0 if ok else 1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--width", type=int, default=320)
    p.add_argument("--height", type=int, default=240)
    p.add_argument("--timeout", type=float, default=30)
    sys.exit(asyncio.run(run(p.parse_args())))


if __name__ == "__main__":
    main()
