#!/usr/bin/env python3
"""An aiortc peer for AiortcInteropTests (run with the aiortc venv's python).

    aiortc_peer.py offer|answer [--width 320 --height 240 --tone 660 --timeout 30]

One audio and one video transceiver, sendrecv. Sends a moving test pattern
(yuv420p, 30 fps) and a sine tone (48 kHz mono, 20 ms frames); receives the
other side's tracks and counts what it decodes.

Signalling is JSON lines on stdin/stdout, vanilla ICE (aiortc's
localDescription after setLocalDescription already holds every candidate):

  offer role:  prints {"type": "offer", "sdp": ...}, reads {"type": "answer", ...}
  answer role: reads {"type": "offer", ...}, prints {"type": "answer", "sdp": ...}
  both:        prints {"event": "connectionState", "state": ...} on each change,
               reads {"command": "stop"}: stops sending at once, waits --drain
               seconds for the last packets, prints one
               {"event": "result", ...} line with its counts;
               reads {"command": "close"} (or EOF): closes the connection
               (DTLS close_notify) and exits 0.

It never hangs its caller: a --timeout (default 30 s) on the whole run, EOF on
stdin before the stop command or a failed connection print
{"event": "error", ...} and exit 1.

ICE: RTCConfiguration(iceServers=[]) (no public STUN fallback) and aioice's
host addresses plus 127.0.0.1, which aioice leaves out (as
scripts/fixtures/aiortc_sdp.py does).
"""
import argparse
import asyncio
import fractions
import json
import math
import struct
import sys
import threading
import time

import aioice.ice
import aiortc
import av
from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError, MediaStreamTrack

VIDEO_CLOCK = 90000
AUDIO_RATE = 48000
AUDIO_SAMPLES = 960  # 20 ms


def add_loopback():
    original = aioice.ice.get_host_addresses

    def get_host_addresses(use_ipv4, use_ipv6):
        addresses = original(use_ipv4=use_ipv4, use_ipv6=use_ipv6)
        if use_ipv4 and "127.0.0.1" not in addresses:
            addresses.insert(0, "127.0.0.1")
        return addresses

    aioice.ice.get_host_addresses = get_host_addresses


def emit(obj):
    sys.stdout.write(json.dumps(obj, sort_keys=True) + "\n")
    sys.stdout.flush()


def log(text):
    print(f"aiortc_peer: {text}", file=sys.stderr, flush=True)


class Paced:
    """Shared pacing and the stop switch: after stop(), recv() never returns."""

    def __init__(self):
        self.stopped = asyncio.Event()

    async def hold_if_stopped(self):
        if self.stopped.is_set():
            await asyncio.Event().wait()  # never set: the sender loop idles


class PatternTrack(MediaStreamTrack):
    """A moving test pattern: a bright vertical bar sweeping over a gradient."""

    kind = "video"

    def __init__(self, paced, width, height, fps=30):
        super().__init__()
        self.paced = paced
        self.width, self.height, self.fps = width, height, fps
        self.sent = 0
        self.start = None
        row = bytes((x * 200) // width + 16 for x in range(width))
        self.luma = row * height
        self.chroma = bytes([128]) * ((width // 2) * (height // 2))

    async def recv(self):
        await self.paced.hold_if_stopped()
        if self.start is None:
            self.start = time.time()
        else:
            wait = self.start + self.sent / self.fps - time.time()
            if wait > 0:
                await asyncio.sleep(wait)
        await self.paced.hold_if_stopped()
        n = self.sent
        frame = av.VideoFrame(self.width, self.height, "yuv420p")
        bar = (n * 8) % self.width
        bar_end = min(bar + 16, self.width)
        row = bytearray(self.luma[: self.width])
        row[bar:bar_end] = b"\xeb" * (bar_end - bar)
        luma = bytes(row) * self.height
        for plane, data in zip(frame.planes, (luma, self.chroma, self.chroma)):
            width = plane.width
            if plane.line_size == width:
                plane.update(data)
            else:  # padded lines
                padded = b"".join(data[y * width:(y + 1) * width] + bytes(plane.line_size - width)
                                  for y in range(plane.height))
                plane.update(padded)
        frame.pts = n * VIDEO_CLOCK // self.fps
        frame.time_base = fractions.Fraction(1, VIDEO_CLOCK)
        self.sent += 1
        return frame


class FileTrack(MediaStreamTrack):
    """What a file holds, passed through without decoding (aiortc's MediaPlayer with
    decode=False: VP8 from an IVF file, Opus from an Ogg file; its sender packetizes the
    encoded packets as they are), counting what it sent; it stops with the others."""

    def __init__(self, paced, path, kind):
        super().__init__()
        from aiortc.contrib.media import MediaPlayer
        self.kind = kind
        self.paced = paced
        self.player = MediaPlayer(path, decode=False)
        self.source = self.player.video if kind == "video" else self.player.audio
        if self.source is None:
            raise ValueError(f"{path}: no {kind} stream aiortc can pass through (VP8 in IVF, Opus in Ogg)")
        self.sent = 0

    async def recv(self):
        await self.paced.hold_if_stopped()
        packet = await self.source.recv()
        self.sent += 1
        return packet

    def stop(self):
        super().stop()
        self.source.stop()


class ToneTrack(MediaStreamTrack):
    """A sine tone, 48 kHz s16, 20 ms frames, -12 dBFS peak (-15 dBFS RMS), the same
    samples in both channels of a stereo frame: aiortc's Opus encoder takes stereo,
    and its resampler would lower a mono source by 3 dB (swresample's centre mix)."""

    kind = "audio"

    def __init__(self, paced, frequency):
        super().__init__()
        self.paced = paced
        self.frequency = frequency
        self.sent = 0
        self.start = None

    async def recv(self):
        await self.paced.hold_if_stopped()
        if self.start is None:
            self.start = time.time()
        else:
            wait = self.start + self.sent * AUDIO_SAMPLES / AUDIO_RATE - time.time()
            if wait > 0:
                await asyncio.sleep(wait)
        await self.paced.hold_if_stopped()
        first = self.sent * AUDIO_SAMPLES
        amplitude = 32767 * 10 ** (-12 / 20)
        samples = [int(amplitude * math.sin(2 * math.pi * self.frequency * (first + i) / AUDIO_RATE))
                   for i in range(AUDIO_SAMPLES)]
        frame = av.AudioFrame(format="s16", layout="stereo", samples=AUDIO_SAMPLES)
        frame.planes[0].update(struct.pack(f"<{2 * AUDIO_SAMPLES}h", *(v for v in samples for _ in (0, 1))))
        frame.sample_rate = AUDIO_RATE
        frame.pts = first
        frame.time_base = fractions.Fraction(1, AUDIO_RATE)
        self.sent += 1
        return frame


class Counter:
    """What arrives on one remote track."""

    def __init__(self, on_first_video=None, analyse_audio=True):
        self.on_first_video = on_first_video  # called once, with the first video frame
        self.analyse_audio = analyse_audio    # the level and pitch of the audio (per sample, in Python)
        self.video_frames = 0
        self.video_sizes = set()
        self.audio_frames = 0
        self.audio_samples = 0
        self.audio_rates = set()
        self.audio_layouts = set()
        self.sum_squares = 0.0
        self.measured = 0
        self.crossings = 0
        self.last_sign = None
        self.last_value = None

    def audio(self, frame):
        self.audio_frames += 1
        self.audio_samples += frame.samples
        self.audio_rates.add(frame.sample_rate)
        self.audio_layouts.add(frame.layout.name)
        if not self.analyse_audio or frame.format.name != "s16" or self.audio_frames <= 25:
            return  # skip the first 0.5 s (decoder start, silence before the tone)
        channels = len(frame.layout.channels)
        data = bytes(frame.planes[0])[: frame.samples * channels * 2]
        values = struct.unpack(f"<{len(data) // 2}h", data)[::channels]  # first channel
        for v in values:
            self.sum_squares += v * v
            self.measured += 1
            sign = v >= 0
            if self.last_sign is not None and sign != self.last_sign:
                self.crossings += 1
            self.last_sign = sign

    def audio_summary(self):
        rms = math.sqrt(self.sum_squares / self.measured) if self.measured else 0.0
        # Two zero crossings per period.
        freq = self.crossings / 2 / (self.measured / AUDIO_RATE) if self.measured else 0.0
        dbfs = 20 * math.log10(rms / 32768) if rms > 0 else -120.0
        return {"audioLevelDBFS": round(dbfs, 2), "audioFrequencyHz": round(freq, 1)}


async def consume(track, counter):
    try:
        while True:
            frame = await track.recv()
            if track.kind == "video":
                counter.video_frames += 1
                if counter.video_frames == 1 and counter.on_first_video is not None:
                    counter.on_first_video()
                counter.video_sizes.add(f"{frame.width}x{frame.height}")
            else:
                counter.audio(frame)
    except MediaStreamError:
        pass


class StdinLines:
    """stdin's lines, read on a daemon thread (works for pipes, files and
    /dev/null alike, and never keeps the process alive at exit)."""

    def __init__(self, loop):
        self.queue = asyncio.Queue()

        def pump():
            for line in sys.stdin:
                loop.call_soon_threadsafe(self.queue.put_nowait, line)
            loop.call_soon_threadsafe(self.queue.put_nowait, None)

        threading.Thread(target=pump, daemon=True).start()

    async def readline(self):
        return await self.queue.get()


async def read_line(reader):
    line = await reader.readline()
    if not line:
        raise EOFError("stdin closed")
    return json.loads(line)


def stats_highlights(report):
    out = {}
    for s in report.values():
        d = {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in vars(s).items()}
        out.setdefault(s.type, []).append(d)
    return out


async def run(args):
    loop = asyncio.get_running_loop()
    reader = StdinLines(loop)

    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    paced = Paced()
    video = PatternTrack(paced, args.width, args.height)
    audio = ToneTrack(paced, args.tone)
    counter = Counter()
    consumers = []
    connected_at = None
    failed = asyncio.Event()

    @pc.on("connectionstatechange")
    async def on_state():
        nonlocal connected_at
        state = pc.connectionState
        if state == "connected" and connected_at is None:
            connected_at = time.time()
        emit({"event": "connectionState", "state": state})
        if state == "failed":
            failed.set()

    @pc.on("track")
    def on_track(track):
        log(f"track {track.kind}")
        consumers.append(asyncio.ensure_future(consume(track, counter)))

    try:
        if args.role == "offer":
            pc.addTransceiver(audio, direction="sendrecv")
            pc.addTransceiver(video, direction="sendrecv")
            await pc.setLocalDescription(await pc.createOffer())
            emit({"type": "offer", "sdp": pc.localDescription.sdp})
            answer = await read_line(reader)
            await pc.setRemoteDescription(RTCSessionDescription(sdp=answer["sdp"], type="answer"))
        else:
            offer = await read_line(reader)
            await pc.setRemoteDescription(RTCSessionDescription(sdp=offer["sdp"], type="offer"))
            pc.addTrack(audio)
            pc.addTrack(video)
            await pc.setLocalDescription(await pc.createAnswer())
            emit({"type": "answer", "sdp": pc.localDescription.sdp})

        # Wait for the stop command (or a failure).
        stop = asyncio.ensure_future(read_line(reader))
        failure = asyncio.ensure_future(failed.wait())
        done, _ = await asyncio.wait({stop, failure}, return_when=asyncio.FIRST_COMPLETED)
        if failure in done:
            stop.cancel()
            raise RuntimeError("connection failed")
        failure.cancel()
        command = stop.result()
        if command.get("command") != "stop":
            raise RuntimeError(f"unexpected command {command}")
        paced.stopped.set()
        stopped_at = time.time()
        await asyncio.sleep(args.drain)

        stats = await pc.getStats()
        codecs = {}
        for t in pc.getTransceivers():
            # The negotiated codecs, preferred first (what the sender uses).
            negotiated = [c for c in t._codecs if not c.mimeType.endswith("/rtx")]
            if negotiated:
                codecs[t.kind] = {"mimeType": negotiated[0].mimeType, "payloadType": negotiated[0].payloadType,
                                  "clockRate": negotiated[0].clockRate}
        result = {
            "event": "result",
            "aiortc": aiortc.__version__,
            "role": args.role,
            "videoFramesSent": video.sent,
            "audioFramesSent": audio.sent,
            "videoFramesReceived": counter.video_frames,
            "videoSizesReceived": sorted(counter.video_sizes),
            "audioFramesReceived": counter.audio_frames,
            "audioSamplesReceived": counter.audio_samples,
            "audioRatesReceived": sorted(counter.audio_rates),
            "sendingSeconds": round(stopped_at - connected_at, 3) if connected_at else None,
            "codecs": codecs,
            "stats": stats_highlights(stats),
        }
        result.update(counter.audio_summary())
        emit(result)
        try:
            command = await read_line(reader)
            if command.get("command") != "close":
                raise RuntimeError(f"unexpected command {command}")
        except EOFError:
            pass
        await pc.close()
        return 0
    finally:
        for c in consumers:
            c.cancel()
        await pc.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("role", choices=["offer", "answer"])
    ap.add_argument("--width", type=int, default=320)
    ap.add_argument("--height", type=int, default=240)
    ap.add_argument("--tone", type=float, default=660.0)
    ap.add_argument("--drain", type=float, default=0.5, help="seconds between stop and the counts")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds for the whole run")
    ap.add_argument("--no-loopback", action="store_true")
    args = ap.parse_args()
    if not args.no_loopback:
        add_loopback()
    try:
        status = asyncio.run(asyncio.wait_for(run(args), args.timeout))
    except (Exception, KeyboardInterrupt) as error:  # timeout, EOF, failure: report and exit, never hang
        if isinstance(error, asyncio.TimeoutError):
            text = f"timed out after {args.timeout} s"
        else:
            text = f"{type(error).__name__}: {error}"
        emit({"event": "error", "error": text})
        log(f"failed: {text}")
        sys.exit(1)
    sys.exit(status)


if __name__ == "__main__":
    main()
