#!/usr/bin/env python3
"""Headless Chromium as a `legacy`-profile peer, for ChromiumRenegotiationTests.

    chromium_peer.py --router ws://127.0.0.1:PORT/ws --prefix P --role offer|answer
        [--duration 12] [--timeout 20] [--at SECONDS:ACTION ...]
        [--data-channel SPEC ...] [--data-burst LABEL:N:BYTES ...] [--data-echo] [--echo-video]

Serves Support/browser/peer-test.html on 127.0.0.1 (a free port; a page from
http://127.0.0.1 is a secure context), starts Debian's chromedriver on a free port
and drives `chromium` through W3C WebDriver (plain HTTP + JSON, no client library):
headless, fake camera and microphone, loopback candidates allowed, no mDNS names, no
network reached for (shared/BROWSER.md). The page speaks WAMP to the router itself.

ACTION, SECONDS after the page's connection is `connected`: `sendonly`, `recvonly`,
`inactive`, `sendrecv` (every transceiver's direction: a renegotiation by
negotiationneeded), `restart-ice` (pc.restartIce()), `add-video` (a second camera track:
a new m-section), `stop-video` (that track's transceiver stopped: its m-section port 0),
`send:LABEL:TEXT` (TEXT on the data channel LABEL), `close:LABEL` (that channel closed).
Data channels (--data-channel, created by the offering page; --data-burst; --data-echo:
the page's query, see peer-test.html); --echo-video: the page sends the video it
receives back instead of its camera; the page's per-label counts are in the result's
"data". Every second the page's getStats (inbound/outbound-rtp, transport, data-channel) is
printed as a {"event": "stats"} line; page events (offered, answered, renegotiated,
glare, track, connectionState, signalingState) as {"event": "page", ...}; last a
{"event": "result", "events": [...], "stats": [...], "ufrags": [...]} line. Exit 0 after
the call, 4 when nothing connected within --timeout, 1 on any other error.
"""
import argparse, http.server, json, os, socket, subprocess, sys, threading, time, urllib.parse, urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
T0 = time.monotonic()


def emit(obj):
    sys.stdout.write(json.dumps(dict(obj, t=round((time.monotonic() - T0) * 1000, 1)), sort_keys=True) + "\n")
    sys.stdout.flush()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WebDriver:
    """The few W3C WebDriver commands the test needs, over chromedriver's HTTP."""

    def __init__(self, port):
        self.base = f"http://127.0.0.1:{port}"
        self.session = None

    def call(self, method, path, body=None, timeout=30):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout) as r:
            value = json.loads(r.read() or b"{}").get("value")
        return value

    def wait_ready(self):
        """Until chromedriver answers /status ready (at most ~10 s)."""
        for _ in range(100):
            try:
                if self.call("GET", "/status", timeout=2).get("ready"):
                    return
            except Exception:
                time.sleep(0.1)

    def start(self, args):
        caps = {"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": {"binary": "/usr/bin/chromium", "args": args}}}}
        self.session = self.call("POST", "/session", caps, timeout=60)["sessionId"]

    def go(self, url):
        self.call("POST", f"/session/{self.session}/url", {"url": url})

    def run(self, script, *args):
        return self.call("POST", f"/session/{self.session}/execute/sync", {"script": script, "args": list(args)})

    def run_async(self, script, *args):
        return self.call("POST", f"/session/{self.session}/execute/async", {"script": script, "args": list(args)}, timeout=60)

    def quit(self):
        if self.session:
            try:
                self.call("DELETE", f"/session/{self.session}", timeout=10)
            except Exception:
                pass


CHROMIUM_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
    "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream",
    "--allow-loopback-in-peer-connection", "--disable-features=WebRtcHideLocalIpsWithMdns",
    "--disable-background-networking", "--disable-component-update", "--no-first-run",
    "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=127.0.0.1",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost , EXCLUDE 127.0.0.1",
]


def action(text):
    seconds, _, what = text.partition(":")
    if what not in ("sendonly", "recvonly", "inactive", "sendrecv", "restart-ice", "add-video", "stop-video") \
            and not what.startswith("send:") and not what.startswith("close:"):
        raise argparse.ArgumentTypeError(f"{text!r}: unknown action")
    return float(seconds), what


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--router", required=True)
    ap.add_argument("--realm", default="realm1")
    ap.add_argument("--prefix", required=True)
    ap.add_argument("--role", choices=["offer", "answer"], required=True)
    ap.add_argument("--duration", type=float, default=12)
    ap.add_argument("--timeout", type=float, default=20)
    ap.add_argument("--at", action="append", default=[], type=action)
    ap.add_argument("--data-channel", action="append", default=[])
    ap.add_argument("--data-burst", action="append", default=[])
    ap.add_argument("--data-echo", action="store_true")
    ap.add_argument("--echo-video", action="store_true")
    a = ap.parse_args()

    handler = lambda *h: http.server.SimpleHTTPRequestHandler(*h, directory=os.path.join(HERE, "browser"))
    http.server.SimpleHTTPRequestHandler.log_message = lambda *x: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = free_port()
    driver_process = subprocess.Popen(["/usr/bin/chromedriver", f"--port={port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wd = WebDriver(port)
    code, seen = 0, 0
    try:
        wd.wait_ready()
        wd.start(CHROMIUM_ARGS)
        query = urllib.parse.urlencode({"router": a.router, "realm": a.realm, "prefix": a.prefix, "role": a.role,
                                        "data": ";".join(a.data_channel), "burst": ";".join(a.data_burst),
                                        "echo": "1" if a.data_echo else "0", "echoVideo": "1" if a.echo_video else "0"})
        wd.go(f"http://127.0.0.1:{server.server_address[1]}/peer-test.html?{query}")
        started = wd.run_async("const done = arguments[arguments.length - 1]; window.peerTest.start().then(done);")
        if started != "ok":
            raise RuntimeError(f"page did not start: {started}")
        emit({"event": "ready", "role": a.role})

        def pump():
            nonlocal seen
            events = wd.run("return window.peerTest.events.slice(arguments[0]);", seen)
            seen += len(events)
            for e in events:
                emit(dict(e, event="page", what=e.get("event")))
            return events

        connected_at = None
        deadline = time.monotonic() + a.timeout
        while connected_at is None:
            for e in pump():
                if e.get("event") == "connectionState" and e.get("state") == "connected":
                    connected_at = time.monotonic()
            if connected_at is None:
                if time.monotonic() > deadline:
                    emit({"event": "error", "error": f"not connected within --timeout {a.timeout} s"})
                    return 4
                time.sleep(0.05)
        ufrags = [wd.run("return window.peerTest.ufrag();")]
        pending = sorted(a.at)
        next_stats = time.monotonic()
        while time.monotonic() < connected_at + a.duration:
            now = time.monotonic()
            while pending and now >= connected_at + pending[0][0]:
                _, what = pending.pop(0)
                if what == "restart-ice":
                    result = wd.run("return window.peerTest.restartIce();")
                elif what == "stop-video":
                    result = wd.run("return window.peerTest.stopAdded();")
                elif what.startswith("send:"):
                    label, _, text = what[5:].partition(":")
                    result = wd.run("return window.peerTest.send(arguments[0], arguments[1]);", label, text)
                elif what.startswith("close:"):
                    result = wd.run("return window.peerTest.closeChannel(arguments[0]);", what[6:])
                elif what == "add-video":
                    result = wd.run_async("const done = arguments[arguments.length - 1]; window.peerTest.addVideo().then(done);")
                else:
                    result = wd.run("return window.peerTest.setDirection('video', arguments[0]).concat(window.peerTest.setDirection('audio', arguments[0]));", what)
                emit({"event": "action", "action": what, "result": result})
            if now >= next_stats:
                next_stats += 1.0
                stats = wd.run_async("const done = arguments[arguments.length - 1]; window.peerTest.stats().then(done);")
                emit({"event": "stats", "stats": stats})
            pump()
            time.sleep(0.05)
        ufrags.append(wd.run("return window.peerTest.ufrag();"))
        final = wd.run_async("const done = arguments[arguments.length - 1]; window.peerTest.stats().then(done);")
        wd.run("return window.peerTest.close();")
        time.sleep(0.3)
        pump()
        emit({"event": "result", "stats": final, "ufrags": ufrags, "data": wd.run("return window.peerTest.data();"),
              "events": wd.run("return window.peerTest.events;")})
    except Exception as error:
        emit({"event": "error", "error": f"{type(error).__name__}: {error}"})
        code = 1
    finally:
        wd.quit()
        driver_process.kill()
        server.shutdown()
    return code


if __name__ == "__main__":
    sys.exit(main())
