#!/usr/bin/env python3
"""An aiortc peer that signals over a WAMP router (autobahn), for AiortcWampInteropTests.
Run it with the aiortc venv's python.

    aiortc_wamp_peer.py --router ws://127.0.0.1:PORT/ws [--realm realm1] --prefix P
        --profile legacy --role offer|answer   (or)   --profile room --room R --user U
        [--vanilla | --trickle] [--duration 5] [--timeout 15]
        [--width 320 --height 240 --fps 30 --tone 660] [--payload object|string]
        [--candidates-in-sdp] [--candidates-first]
        [--accept-reoffers] [--reoffer-at SECONDS:DIRECTION ...]
        [--send-bad N] [--send-bad-at SECONDS]
        [--no-media] [--data-channel SPEC ...] [--data-burst LABEL:N:BYTES ...]
        [--data-send S:LABEL:TEXT ...] [--data-close S:LABEL ...] [--data-echo]
        [--record-audio PATH.ogg]
        [--video-bitrate BPS] [--no-audio-analysis] [--t-from-exec]   (peer-bench compare)
        [--play-video PATH.ivf] [--play-audio PATH.ogg]   (peer-bench load: files passed through)
        (data channels: aiortc_data.py; their counts in each peer's "data")

It speaks the profiles of shared/PROTOCOL.md over one WAMP session (WebSocket
subprotocol wamp.2.json, anonymous):

  legacy  topics P.offer / P.answer [description], P.candidate [candidateString],
          P.close []. Descriptions are published as JSON objects (--payload
          string: JSON strings) and accepted as objects or JSON strings; candidates are JSON strings, "" is
          end-of-candidates. The offerer ignores offers, the answerer ignores answers
          and answers the first offer only (the same offer again, same o= session id
          and version, gets the same answer again); our own candidates echoed back
          are ignored. The offerer republishes its offer every 3 s until answered.
  room    P.R.callme / P.R.close [fromUser]; P.R.U.offer / P.R.U.answer
          [fromUser, descriptionString]; P.R.U.candidate [fromUser, candidateString].
          Subscribes to its own three topics and callme/close, then publishes callme;
          calls every member whose callme it receives, answers every offer; messages
          from itself are ignored; close from a member ends that connection.

Renegotiation (shared/PROTOCOL.md "Renegotiation"), off by default (then a second
offer during a call is ignored, as the oldest clients do): --accept-reoffers
applies and answers a different offer from the call's peer (legacy: on the offer
topic whichever side offered first), and --reoffer-at S:D (repeatable) sets every
transceiver's direction to D (sendrecv, sendonly, recvonly, inactive) S seconds
after connected and re-offers, applying the answer that comes back. aiortc makes
a new o= session id for every description, so our own publications are
recognised by the o= identities we published, offers and answers apart. Events "renegotiated" ({by: local
or remote, direction, ms}) report each exchange.

Bad packets (--send-bad N, for the drop counters of the other side): --send-bad-at
seconds (default 2) after connected, through aiortc's own DTLS-SRTP transport
(RTCDtlsTransport: its SRTP session protects them, its ICE transport sends them), on
each connected link: N RTP packets carrying the video section's mid (RFC 8843
header extension, the negotiated id) with a payload type neither section negotiated;
N with the negotiated video payload type from an SSRC never announced, without a mid;
and N whose SRTP authentication tag has its last byte flipped after protection. Each
kind has an SSRC of its own (sequence numbers 1..N, 5 ms apart), so the real streams'
SRTP indexes are untouched. A "sentBad" event names the SSRCs and payload types.

ICE: aiortc gathers every local candidate inside setLocalDescription, so vanilla
publishes that description as it is. For trickle it publishes the description
at once *without* its candidates (a=candidate and a=end-of-candidates lines removed,
m= port 9 and c=IN IP4 0.0.0.0 as a trickling browser does, RFC 8840 §4.1.3) and
then sends every candidate of the first m-section (all of them are bundled) on the
candidate topic, followed by end-of-candidates: what the other side sees is real
trickle. (--candidates-in-sdp keeps them in the description instead, and still
sends them on the topic.) Remote candidates are applied with addIceCandidate
(aiortc.sdp.candidate_from_sdp), held back until both descriptions are set, and
an empty candidate is end-of-candidates (addIceCandidate(None)). RTCConfiguration
has no ICE servers; 127.0.0.1 is added to aioice's host addresses (it leaves
loopback out).

Media, per connection (aiortc_peer.py's tracks and counters): a 30 fps test
pattern (--width x --height, yuv420p, a bar that moves 8 px per frame) and a sine
tone (--tone Hz, 48 kHz, 20 ms frames); it decodes what it receives and counts
the frames.

The call ends --duration seconds after the first connection is connected: our
senders stop, close is published, and after 0.5 s for the last packets the
frames are counted. Or it ends earlier when the other side hangs up (close on
the router, or DTLS close_notify): our senders stop at once, 0.5 s later we count.
Then the connections close, the session leaves, and one line is printed:

  {"event": "result", "videoFramesSent", "videoFramesReceived", "audioFramesSent",
   "audioFramesReceived", "endedBy": "duration"|"peer", "peers": {remote: {...}}, ...}

A "firstRemoteFrame" event marks the first decoded video frame of the peer.
Other stdout lines are JSON events: {"event": "ready"} once subscribed (and, for
room, callme published), "published" / "received" (signaling, with the topic),
"connectionState", "signalingError"; "received" events carry "as": how the payload
came on the wire ("object" or "string"). Exit 0 after a call; 4 when nothing connects
within --timeout; 1 on any other error (an {"event": "error"} line says why). It
never hangs: the whole run is bounded by --timeout + --duration + 10 s.
"""
import argparse
import asyncio
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from aiortc_peer import Counter, FileTrack, Paced, PatternTrack, ToneTrack, add_loopback, consume  # noqa: E402
from aiortc_data import DataChannels, add_arguments as add_data_arguments  # noqa: E402

import aiortc  # noqa: E402
from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription  # noqa: E402
from aiortc.contrib.media import MediaRecorder, MediaRelay  # noqa: E402
from aiortc.sdp import candidate_from_sdp  # noqa: E402
from autobahn.asyncio.wamp import ApplicationRunner, ApplicationSession  # noqa: E402
from autobahn.wamp.serializer import JsonSerializer  # noqa: E402

DRAIN_SECONDS = 0.5
OFFER_REPEAT_SECONDS = 3.0
T0 = time.monotonic()


def process_age():
    """Seconds since the kernel started this process (/proc/self/stat starttime), as
    peer's "t" counts: --t-from-exec adds it, so interpreter start-up counts too."""
    with open("/proc/self/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    started = int(fields[19]) / os.sysconf("SC_CLK_TCK")
    return time.clock_gettime(time.CLOCK_BOOTTIME) - started


T_OFFSET = 0.0


def emit(obj):
    obj = dict(obj, t=round((time.monotonic() - T0 + T_OFFSET) * 1000, 1))
    sys.stdout.write(json.dumps(obj, sort_keys=True) + "\n")
    sys.stdout.flush()


def log(text):
    print(f"aiortc_wamp_peer: {text}", file=sys.stderr, flush=True)


class Failure(Exception):
    """Ends the run with an exit code."""

    def __init__(self, message, code=1):
        super().__init__(message)
        self.code = code


class BadPayload(Exception):
    """A signaling payload that cannot be used (reported, dropped)."""


# ---- payloads -----------------------------------------------------------------

def json_kind(value):
    """How a payload came on the wire: "object", "string", ..."""
    return {dict: "object", str: "string", list: "array"}.get(type(value), type(value).__name__)


def parse_object(value, what):
    """A JSON object given as an object or as a JSON string holding one."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as error:
            raise BadPayload(f"{what} is a string but not JSON ({error}): {value[:80]!r}")
    if not isinstance(value, dict):
        raise BadPayload(f"{what} is {type(value).__name__}, expected a JSON object or string: {str(value)[:80]!r}")
    return value


def parse_description(value, expected):
    obj = parse_object(value, "session description")
    kind, sdp = obj.get("type"), obj.get("sdp")
    if kind != expected:
        raise BadPayload(f"description of type {kind!r}, expected {expected!r}")
    if not isinstance(sdp, str) or not sdp:
        raise BadPayload("session description without an sdp string")
    return RTCSessionDescription(sdp=sdp, type=kind)


def identity(sdp):
    """The o= session id and version (RFC 8866 §5.2): which offer this is."""
    for line in sdp.splitlines():
        if line.startswith("o="):
            fields = line[2:].split()
            if len(fields) >= 3:
                return f"{fields[1]} {fields[2]}"
    return None


def count_candidates(sdp):
    """How many a=candidate lines a description holds."""
    return sum(1 for line in sdp.splitlines() if line.startswith("a=candidate:"))


def split_candidates(sdp):
    """The SDP without candidates (m= port 9, c=IN IP4 0.0.0.0) and the candidates
    to trickle: [(candidate line without "a=", sdpMid, sdpMLineIndex)], those of the
    first m-section when every section is bundled, else of every section."""
    lines = sdp.split("\r\n")
    out, found, mids = [], {}, {}
    index = -1
    bundle = []
    for line in lines:
        if line.startswith("a=group:BUNDLE "):
            bundle = line.split()[1:]
        if line.startswith("m="):
            index += 1
            parts = line.split(" ")
            if len(parts) > 1 and parts[1] != "0":
                parts[1] = "9"
            line = " ".join(parts)
        elif index >= 0 and line.startswith("c=IN IP4 "):
            line = "c=IN IP4 0.0.0.0"
        elif line.startswith("a=mid:"):
            mids[index] = line[len("a=mid:"):]
        if line.startswith("a=candidate:"):
            found.setdefault(index, []).append(line[2:])
            continue
        if line == "a=end-of-candidates":
            continue
        out.append(line)
    sections = sorted(found)
    if sections and len(bundle) > 1 and all(mids.get(i) in bundle for i in sections):
        sections = sections[:1]
    cands = [(c, mids.get(i, str(i)), i) for i in sections for c in found[i]]
    return "\r\n".join(out), cands


def candidate_payload(text, mid, mline):
    return json.dumps({"candidate": text, "sdpMid": mid, "sdpMLineIndex": mline})


# ---- one connection -----------------------------------------------------------

class Link:
    """One RTCPeerConnection with one remote side (legacy: "offerer"/"answerer";
    room: the remote user id), its tracks and its counters."""

    def __init__(self, agent, remote, offerer):
        self.agent, self.remote, self.offerer = agent, remote, offerer
        args = agent.args
        self.pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        self.paced = Paced()
        # --play-video/--play-audio: a file's packets passed through (peer-bench load), else
        # the pattern and the tone, encoded here.
        self.video = FileTrack(self.paced, args.play_video, "video") if args.play_video \
            else PatternTrack(self.paced, args.width, args.height, args.fps)
        self.audio = FileTrack(self.paced, args.play_audio, "audio") if args.play_audio else ToneTrack(self.paced, args.tone)
        self.counter = Counter(on_first_video=lambda: emit({"event": "firstRemoteFrame", "peer": remote}),
                               analyse_audio=not args.no_audio_analysis)
        self.consumers = []
        # --record-audio: the remote audio also goes to aiortc's own MediaRecorder (Ogg
        # Opus, re-encoded by libopus), through a relay so the counter still sees it.
        self.recorder = MediaRecorder(args.record_audio) if args.record_audio else None
        self.relay = MediaRelay()
        self.recording = False
        self.offer_identity = None
        self.offer_payload = None    # what we publish as offerer (republished until answered)
        self.answer_payload = None   # what we published as answerer (republished on a repeated offer)
        self.local_candidates = []
        self.published = set()       # candidate strings we sent (ignore them when echoed)
        self.answered = False
        self.descriptions_set = False
        self.pending = []            # remote candidates waiting for both descriptions
        self.last_offer = 0.0
        self.connected_at = None
        self.stopped_at = None
        self.ended_by_peer = False
        self.closing = False         # we close it: its "closed" state is not a hang-up
        # o= identities of the offers and of the answers we published, apart: aiortc's o=
        # is the NTP second, so an aiortc peer's answer within the second of our offer has
        # our offer's identity (aiortc to aiortc, peer-bench compare)
        self.own_offers, self.own_answers = set(), set()
        self.reoffer_started = None  # our re-offer waiting for its answer (monotonic time)
        self.pc.on("connectionstatechange", self.on_state)
        self.pc.on("track", self.on_track)
        self.data = DataChannels(self.pc, args, offerer, emit)

    async def on_state(self):
        state = self.pc.connectionState
        emit({"event": "connectionState", "peer": self.remote, "state": state})
        if state == "connected" and self.connected_at is None:
            self.connected_at = time.time()
            self.data.connected()
            self.agent.connected.set()
        elif state == "failed":
            self.agent.fail(Failure(f"connection with {self.remote} failed", 5))
        elif state == "closed" and not self.closing and not self.agent.finishing and self.connected_at is not None:
            self.peer_hung_up("DTLS close_notify")

    def on_track(self, track):
        log(f"{self.remote}: track {track.kind}")
        if track.kind == "audio" and self.recorder is not None and not self.recording:
            self.recording = True  # the first audio track only (a re-offer may fire "track" again)
            self.recorder.addTrack(self.relay.subscribe(track))
            self.consumers.append(asyncio.ensure_future(self.recorder.start()))
            track = self.relay.subscribe(track)
        self.consumers.append(asyncio.ensure_future(consume(track, self.counter)))

    def stop_sending(self):
        if self.stopped_at is None:
            self.paced.stopped.set()
            self.stopped_at = time.time()

    def peer_hung_up(self, how):
        if self.ended_by_peer:
            return
        self.ended_by_peer = True
        self.stop_sending()
        emit({"event": "hungUp", "peer": self.remote, "how": how})
        self.agent.link_ended()

    async def add_remote_candidate(self, payload):
        obj = parse_object(payload, "candidate")
        text = obj.get("candidate") or ""
        if text in self.published:
            return  # our own, echoed
        emit({"event": "received", "what": "candidate" if text else "end-of-candidates", "peer": self.remote,
              "as": json_kind(payload), "sdpMid": obj.get("sdpMid"), "sdpMLineIndex": obj.get("sdpMLineIndex")})
        if not self.descriptions_set:
            self.pending.append(obj)
            return
        await self.apply_candidate(obj)

    async def apply_candidate(self, obj):
        text = obj.get("candidate") or ""
        if not text:
            await self.add(None, "end-of-candidates")
            return
        body = text[len("candidate:"):] if text.startswith("candidate:") else text
        try:
            candidate = candidate_from_sdp(body)
        except (AssertionError, ValueError, IndexError) as error:
            raise BadPayload(f"candidate aiortc cannot parse ({error!r}): {text!r}")
        candidate.sdpMid = obj.get("sdpMid")
        candidate.sdpMLineIndex = obj.get("sdpMLineIndex")
        if candidate.sdpMid is None and candidate.sdpMLineIndex is None:
            raise BadPayload(f"candidate without sdpMid and sdpMLineIndex: {text!r}")
        await self.add(candidate, text)

    async def add(self, candidate, text):
        try:
            await self.pc.addIceCandidate(candidate)
        except ValueError as error:  # e.g. a candidate after end-of-candidates
            raise BadPayload(f"aiortc refused {text!r}: {error}")

    async def descriptions_complete(self):
        self.descriptions_set = True
        pending, self.pending = self.pending, []
        for obj in pending:
            try:
                await self.apply_candidate(obj)
            except BadPayload as error:
                self.agent.signaling_error("candidate", str(error))

    def local_description(self):
        """(description dict to publish, candidates to trickle)."""
        sdp = self.pc.localDescription.sdp
        kind = self.pc.localDescription.type
        if not self.agent.args.trickle:
            return {"type": kind, "sdp": sdp}, []
        stripped, cands = split_candidates(sdp)
        if self.agent.args.candidates_in_sdp:
            stripped = sdp
        return {"type": kind, "sdp": stripped}, cands

    def result(self):
        r = {
            "videoFramesSent": self.video.sent,
            "audioFramesSent": self.audio.sent,
            "videoFramesReceived": self.counter.video_frames,
            "videoSizesReceived": sorted(self.counter.video_sizes),
            "audioFramesReceived": self.counter.audio_frames,
            "sendingSeconds": round(self.stopped_at - self.connected_at, 3)
            if self.connected_at and self.stopped_at else None,
            "endedByPeer": self.ended_by_peer,
            "data": self.data.result(),
        }
        r.update(self.counter.audio_summary())
        return r

    async def close(self):
        self.closing = True
        if self.recorder is not None:
            try:
                await asyncio.wait_for(self.recorder.stop(), 3)
            except (asyncio.TimeoutError, Exception) as error:  # closing must never hang the exit
                log(f"{self.remote}: recorder stop: {error!r}")
        for c in self.consumers:
            c.cancel()
        try:
            await asyncio.wait_for(self.pc.close(), 3)
        except (asyncio.TimeoutError, Exception) as error:  # closing must never hang the exit
            log(f"{self.remote}: close: {error!r}")


# ---- the agent ----------------------------------------------------------------

class WampSession(ApplicationSession):
    """Hands the joined session to the agent."""

    def __init__(self, config, joined, gone):
        super().__init__(config)
        self._joined, self._gone = joined, gone

    async def onJoin(self, details):
        if not self._joined.done():
            self._joined.set_result(self)

    def onDisconnect(self):
        if not self._joined.done():
            self._joined.set_exception(Failure("router closed the connection before WELCOME", 3))
        self._gone.set()


class Agent:
    def __init__(self, args):
        self.args = args
        self.session = None
        self.links = {}
        self.connected = asyncio.Event()
        self.peer_gone = asyncio.Event()
        self.failure = asyncio.get_running_loop().create_future()
        self.finishing = False
        self.router_gone = asyncio.Event()

    # -- topics
    def legacy(self, name):
        return f"{self.args.prefix}.{name}"

    def room(self, name):
        return f"{self.args.prefix}.{self.args.room}.{name}"

    def user(self, user, name):
        return f"{self.args.prefix}.{self.args.room}.{user}.{name}"

    def fail(self, failure):
        if not self.failure.done():
            self.failure.set_result(failure)

    def signaling_error(self, topic, reason):
        emit({"event": "signalingError", "topic": topic, "reason": reason})
        log(f"dropped a message on {topic}: {reason}")

    def link_ended(self):
        connected = [l for l in self.links.values() if l.connected_at is not None]
        if connected and all(l.ended_by_peer for l in connected):
            self.peer_gone.set()

    def legacy_description(self, description):
        """Legacy: a JSON object, or (--payload string) a JSON string of it."""
        return json.dumps(description) if self.args.payload == "string" else description

    def publish(self, topic, *args):
        emit({"event": "published", "topic": topic})
        if self.args.log_wire:
            log(f"-> {topic} {json.dumps(list(args))}")
        self.session.publish(topic, *args)

    # -- joining
    async def join(self):
        loop = asyncio.get_running_loop()
        joined = loop.create_future()
        runner = ApplicationRunner(self.args.router, self.args.realm, serializers=[JsonSerializer()])
        await runner.run(lambda config: WampSession(config, joined, self.router_gone), start_loop=False)
        self.session = await joined

    async def subscribe(self, topic, handler):
        async def wrapped(*args, **kwargs):
            if self.args.log_wire:
                log(f"<- {topic} {json.dumps(list(args))}")
            try:
                await handler(topic, list(args))
            except BadPayload as error:
                self.signaling_error(topic, str(error))
            except Failure as error:
                self.fail(error)
            except Exception as error:  # an aiortc error on a message: report it, end the run
                self.fail(Failure(f"handling {topic}: {type(error).__name__}: {error}"))
        await self.session.subscribe(wrapped, topic)

    async def setup(self):
        a = self.args
        if a.profile == "legacy":
            for name, handler in (("offer", self.on_legacy_offer), ("answer", self.on_legacy_answer),
                                  ("candidate", self.on_legacy_candidate), ("close", self.on_legacy_close)):
                await self.subscribe(self.legacy(name), handler)
        else:
            for name, handler in (("offer", self.on_room_offer), ("answer", self.on_room_answer),
                                  ("candidate", self.on_room_candidate)):
                await self.subscribe(self.user(a.user, name), handler)
            await self.subscribe(self.room("callme"), self.on_callme)
            await self.subscribe(self.room("close"), self.on_room_close)
            self.publish(self.room("callme"), a.user)
        emit({"event": "ready", "profile": a.profile, "role": a.role if a.profile == "legacy" else "room",
              "user": a.user})
        if a.profile == "legacy" and a.role == "offer":
            await self.call("answerer")

    # -- offer / answer
    def new_link(self, remote, offerer):
        link = Link(self, remote, offerer)
        self.links[remote] = link
        return link

    async def call(self, remote):
        """Offer to `remote` (legacy: "answerer"; room: a user id)."""
        link = self.new_link(remote, offerer=True)
        if not self.args.no_media:
            link.pc.addTransceiver(link.audio, direction="sendrecv")
            link.pc.addTransceiver(link.video, direction="sendrecv")
        await link.pc.setLocalDescription(await link.pc.createOffer())
        link.offer_payload, link.local_candidates = link.local_description()
        link.offer_identity = identity(link.pc.localDescription.sdp)
        link.own_offers.add(link.offer_identity)
        self.publish_offer(link)

    def publish_offer(self, link):
        link.last_offer = time.monotonic()
        if self.args.candidates_first:  # the other side sees candidates before the offer
            self.publish_candidates(link)
        if self.args.profile == "legacy":
            self.publish(self.legacy("offer"), self.legacy_description(link.offer_payload))
        else:
            self.publish(self.user(link.remote, "offer"), self.args.user, json.dumps(link.offer_payload))
        if not self.args.candidates_first:
            self.publish_candidates(link)

    def publish_candidates(self, link):
        if not link.local_candidates:
            return
        mid, mline = link.local_candidates[0][1], link.local_candidates[0][2]
        for text, c_mid, c_mline in link.local_candidates + [("", mid, mline)]:
            if text:  # ("" is everyone's end-of-candidates: never take it for our own)
                link.published.add(text)
            payload = candidate_payload(text, c_mid, c_mline)
            if self.args.profile == "legacy":
                self.publish(self.legacy("candidate"), payload)
            else:
                self.publish(self.user(link.remote, "candidate"), self.args.user, payload)

    async def republish_offers(self):
        while True:
            await asyncio.sleep(0.25)
            for link in list(self.links.values()):
                if link.offerer and not link.answered and link.offer_payload \
                        and time.monotonic() - link.last_offer >= OFFER_REPEAT_SECONDS:
                    self.publish_offer(link)

    async def answer(self, remote, offer, wire):
        """Answer `offer` from `remote`; the same offer again gets the same answer."""
        link = self.links.get(remote)
        oid = identity(offer.sdp)
        if link is not None:
            if not link.offerer and oid is not None and oid == link.offer_identity and link.answer_payload:
                self.publish_answer(link)  # our first answer may have been missed
                return
            if self.args.accept_reoffers and link.connected_at is not None:
                await self.reanswer(link, offer)
                return
            if self.args.profile == "legacy":
                emit({"event": "busy", "offer": oid})  # a different offer while in a call: ignored
                return
            await link.close()  # room: a new session from that user replaces the old one
        link = self.new_link(remote, offerer=False)
        link.offer_identity = oid
        emit({"event": "received", "what": "offer", "peer": remote, "candidates": count_candidates(offer.sdp),
              "as": wire})
        await link.pc.setRemoteDescription(offer)
        if not self.args.no_media:
            link.pc.addTrack(link.audio)
            link.pc.addTrack(link.video)
        await link.pc.setLocalDescription(await link.pc.createAnswer())
        link.answer_payload, link.local_candidates = link.local_description()
        link.own_answers.add(identity(link.pc.localDescription.sdp))
        link.answered = True
        self.publish_answer(link)
        await link.descriptions_complete()

    async def reanswer(self, link, offer):
        """A re-offer from the call's peer: applied and answered."""
        started = time.monotonic()
        link.offer_identity = identity(offer.sdp)
        await link.pc.setRemoteDescription(offer)
        await link.pc.setLocalDescription(await link.pc.createAnswer())
        link.answer_payload, _ = link.local_description()
        link.own_answers.add(identity(link.pc.localDescription.sdp))
        if self.args.profile == "legacy":
            self.publish(self.legacy("answer"), self.legacy_description(link.answer_payload))
        else:
            self.publish(self.user(link.remote, "answer"), self.args.user, json.dumps(link.answer_payload))
        emit({"event": "renegotiated", "by": "remote", "peer": link.remote,
              "directions": [t.currentDirection for t in link.pc.getTransceivers()],
              "ms": round((time.monotonic() - started) * 1000, 1)})

    async def reoffer(self, link, direction):
        """Sets every transceiver's direction and re-offers."""
        for t in link.pc.getTransceivers():
            t.direction = direction
        await link.pc.setLocalDescription(await link.pc.createOffer())
        payload, _ = link.local_description()
        link.own_offers.add(identity(link.pc.localDescription.sdp))
        link.reoffer_started = time.monotonic()
        if self.args.profile == "legacy":
            self.publish(self.legacy("offer"), self.legacy_description(payload))
        else:
            self.publish(self.user(link.remote, "offer"), self.args.user, json.dumps(payload))

    async def reanswered(self, link, answer):
        started, link.reoffer_started = link.reoffer_started, None
        await link.pc.setRemoteDescription(answer)
        emit({"event": "renegotiated", "by": "local", "peer": link.remote,
              "directions": [t.currentDirection for t in link.pc.getTransceivers()],
              "ms": round((time.monotonic() - started) * 1000, 1)})

    async def send_bad(self, link, n):
        """--send-bad: N packets of each bad kind through the link's DTLS-SRTP transport."""
        sdp = link.pc.localDescription.sdp
        video = sdp[sdp.index("m=video"):] if "m=video" in sdp else ""
        mid = re.search(r"^a=mid:(\S+)", video, re.M).group(1)
        video_pt = int(video.split("\r\n", 1)[0].split()[3])
        ext = re.search(r"^a=extmap:(\d+)\S* urn:ietf:params:rtp-hdrext:sdes:mid", sdp, re.M)
        used = {int(pt) for line in re.findall(r"^m=\S+ \d+ \S+ (.*)$", sdp, re.M) for pt in line.split() if pt.isdigit()}
        bad_pt = next(pt for pt in range(127, 95, -1) if pt not in used)
        ssrcs = [int.from_bytes(os.urandom(4), "big") | 1 for _ in range(3)]
        dtls = link.pc.getTransceivers()[0].sender.transport

        def rtp(pt, ssrc, seq, mid_ext=None):
            first = 0x90 if mid_ext else 0x80
            head = bytes([first, pt]) + seq.to_bytes(2, "big") + (seq * 3000).to_bytes(4, "big") + ssrc.to_bytes(4, "big")
            if mid_ext:
                ext_id, value = mid_ext
                element = bytes([ext_id << 4 | (len(value) - 1)]) + value
                element += bytes((-len(element)) % 4)
                head += b"\xbe\xde" + (len(element) // 4).to_bytes(2, "big") + element
            return head + bytes([0x90, 0x80, 0x00]) + os.urandom(20)

        for seq in range(1, n + 1):
            await dtls._send_rtp(rtp(bad_pt, ssrcs[0], seq, (int(ext.group(1)), mid.encode()) if ext else None))
            await dtls._send_rtp(rtp(video_pt, ssrcs[1], seq))
            protected = bytearray(dtls._tx_srtp.protect(rtp(video_pt, ssrcs[2], seq)))
            protected[-1] ^= 0xFF
            await dtls.transport._send(bytes(protected))
            await asyncio.sleep(0.005)
        emit({"event": "sentBad", "peer": link.remote, "count": n, "mid": mid, "midExtension": bool(ext),
              "unknownPayloadType": {"ssrc": ssrcs[0], "payloadType": bad_pt},
              "unknownSsrc": {"ssrc": ssrcs[1], "payloadType": video_pt}, "badTag": {"ssrc": ssrcs[2], "payloadType": video_pt}})

    async def scheduled_bad(self):
        """--send-bad: --send-bad-at seconds after the first connection, on every connected link."""
        if not self.args.send_bad:
            return
        await self.connected.wait()
        await asyncio.sleep(self.args.send_bad_at)
        for link in list(self.links.values()):
            if link.connected_at is not None:
                await self.send_bad(link, self.args.send_bad)

    async def scheduled_reoffers(self):
        """--reoffer-at: each at its time after the first connection, on every connected link."""
        await self.connected.wait()
        start = time.monotonic()
        for at, direction in sorted(self.args.reoffer_at):
            await asyncio.sleep(max(0.0, start + at - time.monotonic()))
            for link in list(self.links.values()):
                if link.connected_at is not None and link.reoffer_started is None:
                    await self.reoffer(link, direction)

    def publish_answer(self, link):
        if self.args.profile == "legacy":
            self.publish(self.legacy("answer"), self.legacy_description(link.answer_payload))
        else:
            self.publish(self.user(link.remote, "answer"), self.args.user, json.dumps(link.answer_payload))
        self.publish_candidates(link)

    async def apply_answer(self, remote, answer, wire):
        link = self.links.get(remote)
        if link is not None and identity(answer.sdp) in link.own_answers:
            return  # our own, echoed
        if link is not None and link.reoffer_started is not None:
            await self.reanswered(link, answer)
            return
        if link is None or not link.offerer or link.answered:
            return
        ports = re.findall(r"^m=\S+ (\d+)", answer.sdp, re.M)
        if ports and all(p == "0" for p in ports):  # a decline (busy): ours only if it repeats our o=
            if identity(answer.sdp) == link.offer_identity:
                raise Failure(f"{remote} is busy", 8)
            return
        emit({"event": "received", "what": "answer", "peer": remote, "candidates": count_candidates(answer.sdp),
              "as": wire})
        link.answered = True
        await link.pc.setRemoteDescription(answer)
        await link.descriptions_complete()

    # -- legacy handlers
    async def on_legacy_offer(self, topic, args):
        peer = "answerer" if self.args.role == "offer" else "offerer"
        link = self.links.get(peer)
        renegotiating = self.args.accept_reoffers and link is not None and link.connected_at is not None
        if self.args.role != "answer" and not renegotiating:
            return  # the offerer ignores offers (its own included)
        if not args:
            raise BadPayload("offer without arguments")
        offer = parse_description(args[0], "offer")
        if link is not None and identity(offer.sdp) in link.own_offers:
            return  # our own re-offer, echoed
        await self.answer(peer, offer, json_kind(args[0]))

    async def on_legacy_answer(self, topic, args):
        peer = "answerer" if self.args.role == "offer" else "offerer"
        link = self.links.get(peer)
        if self.args.role != "offer" and (link is None or link.reoffer_started is None):
            return  # the answerer ignores answers (its own included), but those to its re-offers
        if not args:
            raise BadPayload("answer without arguments")
        await self.apply_answer(peer, parse_description(args[0], "answer"), json_kind(args[0]))

    async def on_legacy_candidate(self, topic, args):
        if not args:
            raise BadPayload("candidate without arguments")
        link = self.links.get("answerer" if self.args.role == "offer" else "offerer")
        if link is not None:
            await link.add_remote_candidate(args[0])

    async def on_legacy_close(self, topic, args):
        emit({"event": "received", "what": "close"})
        if self.finishing:
            return
        for link in self.links.values():
            if link.answered:
                link.peer_hung_up("close")

    # -- room handlers
    def room_sender(self, args, what):
        if not args or not isinstance(args[0], str):
            raise BadPayload(f"{what} without a fromUser string as first argument")
        return None if args[0] == self.args.user else args[0]

    async def on_callme(self, topic, args):
        remote = self.room_sender(args, "callme")
        if remote is None:
            return
        emit({"event": "received", "what": "callme", "peer": remote})
        old = self.links.get(remote)
        if old is not None:
            if old.connected_at is not None and not old.ended_by_peer:
                return
            await old.close()
        await self.call(remote)

    async def on_room_close(self, topic, args):
        remote = self.room_sender(args, "close")
        if remote is None:
            return
        emit({"event": "received", "what": "close", "peer": remote})
        if self.finishing:
            return
        link = self.links.get(remote)
        if link is not None:
            link.peer_hung_up("close")

    async def on_room_offer(self, topic, args):
        remote = self.room_sender(args, "offer")
        if remote is None:
            return
        if len(args) < 2:
            raise BadPayload("offer without a description argument")
        await self.answer(remote, parse_description(args[1], "offer"), json_kind(args[1]))

    async def on_room_answer(self, topic, args):
        remote = self.room_sender(args, "answer")
        if remote is None:
            return
        if len(args) < 2:
            raise BadPayload("answer without a description argument")
        await self.apply_answer(remote, parse_description(args[1], "answer"), json_kind(args[1]))

    async def on_room_candidate(self, topic, args):
        remote = self.room_sender(args, "candidate")
        if remote is None:
            return
        if len(args) < 2:
            raise BadPayload("candidate without a candidate argument")
        link = self.links.get(remote)
        if link is not None:
            await link.add_remote_candidate(args[1])

    # -- the run
    async def until(self, event, seconds):
        """Waits for `event` at most `seconds`; raises the failure if one comes first.
        True when the event was set."""
        waiter = asyncio.ensure_future(event.wait())
        gone = asyncio.ensure_future(self.router_gone.wait())
        done, _ = await asyncio.wait({waiter, self.failure, gone}, timeout=seconds,
                                     return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        gone.cancel()
        if self.failure in done:
            raise self.failure.result()
        if gone in done and waiter not in done:
            raise Failure("the router connection was lost", 3)
        return waiter in done

    async def run(self):
        a = self.args
        try:
            await asyncio.wait_for(self.join(), a.timeout)
        except asyncio.TimeoutError:
            raise Failure(f"router {a.router}: not joined within --timeout {a.timeout} s", 3)
        except OSError as error:
            raise Failure(f"router {a.router}: {error}", 3)
        republisher = asyncio.ensure_future(self.republish_offers())
        reoffers = asyncio.ensure_future(self.scheduled_reoffers())
        bad = asyncio.ensure_future(self.scheduled_bad())
        try:
            await self.setup()
            if not await self.until(self.connected, a.timeout):
                raise Failure(f"no connection within --timeout {a.timeout} s", 4)
            ended_by = "peer" if await self.until(self.peer_gone, a.duration) else "duration"
            self.finishing = True
            for link in self.links.values():
                link.stop_sending()
            if ended_by == "duration":
                if a.profile == "legacy":
                    self.publish(self.legacy("close"))
                else:
                    self.publish(self.room("close"), a.user)
            await asyncio.sleep(DRAIN_SECONDS)
            peers = {remote: link.result() for remote, link in self.links.items() if link.connected_at is not None}
        finally:
            republisher.cancel()
            reoffers.cancel()
            bad.cancel()
            self.finishing = True
            for link in list(self.links.values()):
                await link.close()
            if self.session is not None and self.session.is_attached():
                try:
                    await asyncio.wait_for(self.session.leave(), 2)
                except Exception as error:
                    log(f"leave: {error!r}")
        total = {k: sum(p[k] for p in peers.values())
                 for k in ("videoFramesSent", "audioFramesSent", "videoFramesReceived", "audioFramesReceived")}
        emit(dict(total, event="result", aiortc=aiortc.__version__, profile=a.profile,
                  role=a.role if a.profile == "legacy" else "room", ice="trickle" if a.trickle else "vanilla",
                  endedBy=ended_by, peers=peers))
        return 0


async def main_async(args):
    agent = Agent(args)
    return await asyncio.wait_for(agent.run(), args.timeout + args.duration + 10)


def enlarge_udp_receive_buffers(size):
    """aioice sets SO_RCVBUF to its turn.UDP_SOCKET_BUFFER_SIZE (256 KiB) on every socket it
    opens; make that `size` (the kernel caps it at net.core.rmem_max)."""
    import aioice.turn
    aioice.turn.UDP_SOCKET_BUFFER_SIZE = size


def reoffer_at(text):
    seconds, _, direction = text.partition(":")
    if direction not in ("sendrecv", "sendonly", "recvonly", "inactive"):
        raise argparse.ArgumentTypeError(f"{text!r}: expected SECONDS:sendrecv|sendonly|recvonly|inactive")
    return float(seconds), direction


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--router", required=True, help="ws://HOST:PORT/PATH")
    ap.add_argument("--realm", default="realm1")
    ap.add_argument("--prefix", default="com.nakadoribook.webrtc")
    ap.add_argument("--profile", choices=["legacy", "room"], default="legacy")
    ap.add_argument("--role", choices=["offer", "answer"], help="legacy profile: offer or answer")
    ap.add_argument("--room", default="default")
    ap.add_argument("--user", default=None, help="room profile: our user id (default: random)")
    ice = ap.add_mutually_exclusive_group()
    ice.add_argument("--trickle", dest="trickle", action="store_true", default=True)
    ice.add_argument("--vanilla", dest="trickle", action="store_false")
    ap.add_argument("--payload", choices=["object", "string"], default="object",
                    help="legacy: publish descriptions as JSON objects (default) or JSON strings")
    ap.add_argument("--candidates-in-sdp", action="store_true",
                    help="trickle: keep the candidates in the description too")
    ap.add_argument("--candidates-first", action="store_true",
                    help="trickle, offering: publish the candidates before the offer, not after it")
    ap.add_argument("--accept-reoffers", action="store_true", help="apply and answer re-offers from the call's peer")
    ap.add_argument("--reoffer-at", action="append", default=[], type=reoffer_at, metavar="SECONDS:DIRECTION",
                    help="set every transceiver's direction and re-offer, SECONDS after connected (repeatable)")
    ap.add_argument("--send-bad", type=int, default=0, metavar="N",
                    help="send N packets of each bad kind: unnegotiated payload type, unknown SSRC, broken SRTP tag")
    ap.add_argument("--send-bad-at", type=float, default=2.0, metavar="SECONDS", help="when, after connected (default 2)")
    ap.add_argument("--duration", type=float, default=5.0, help="seconds of media once connected")
    ap.add_argument("--timeout", type=float, default=15.0, help="seconds to join and to connect")
    ap.add_argument("--width", type=int, default=320)
    ap.add_argument("--height", type=int, default=240)
    ap.add_argument("--fps", type=int, default=30)
    ap.add_argument("--tone", type=float, default=660.0)
    ap.add_argument("--no-loopback", action="store_true")
    ap.add_argument("--no-media", action="store_true", help="no audio or video tracks (a data-only call)")
    ap.add_argument("--record-audio", metavar="PATH", help="record the remote audio to PATH (Ogg Opus, aiortc's MediaRecorder)")
    add_data_arguments(ap)
    ap.add_argument("--log-wire", action="store_true", help="every publication sent and received, on stderr")
    ap.add_argument("--video-bitrate", type=int, metavar="BPS",
                    help="pin aiortc's VP8 target bitrate (its default 500 kbit/s, moved by REMB within 250k-1.5M)")
    ap.add_argument("--play-video", metavar="PATH.ivf",
                    help="send this IVF file's VP8 frames as they are (aiortc's MediaPlayer, decode=False; "
                         "no loop: make it longer than the call) instead of the encoded pattern")
    ap.add_argument("--play-audio", metavar="PATH.ogg",
                    help="send this Ogg file's Opus packets as they are instead of the encoded tone")
    ap.add_argument("--no-audio-analysis", action="store_true",
                    help="skip the per-sample level and pitch of the received audio (peer-bench compare: CPU)")
    ap.add_argument("--udp-receive-buffer", type=int, metavar="BYTES",
                    help="SO_RCVBUF of every UDP socket aiortc (aioice) opens: a Python receiver "
                         "reading a 10 MB burst otherwise drops thousands of datagrams at its socket")
    ap.add_argument("--t-from-exec", action="store_true",
                    help="events' t in ms since the process started (as peer's), not since this script's import")
    args = ap.parse_args()
    if args.t_from_exec:
        global T_OFFSET
        T_OFFSET = process_age() - (time.monotonic() - T0)
    if args.udp_receive_buffer:
        enlarge_udp_receive_buffers(args.udp_receive_buffer)
    if args.video_bitrate:
        import aiortc.codecs.vpx as vpx
        vpx.DEFAULT_BITRATE = vpx.MIN_BITRATE = vpx.MAX_BITRATE = args.video_bitrate
    if args.profile == "legacy" and args.role is None:
        ap.error("--profile legacy needs --role offer|answer")
    if args.user is None:
        args.user = "aio" + os.urandom(4).hex()
    if "." in args.user or not args.user:
        ap.error("--user must be non-empty without dots")
    if not args.no_loopback:
        add_loopback()
    try:
        status = asyncio.run(main_async(args))
    except (Exception, KeyboardInterrupt) as error:  # timeout, router, ICE: report and exit, never hang
        if isinstance(error, asyncio.TimeoutError):
            text, code = f"run took longer than --timeout + --duration + 10 s", 1
        elif isinstance(error, Failure):
            text, code = str(error), error.code
        else:
            text, code = f"{type(error).__name__}: {error}", 1
        emit({"event": "error", "error": text, "code": code})
        log(f"failed: {text}")
        sys.stdout.flush()
        os._exit(code)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


if __name__ == "__main__":
    main()
