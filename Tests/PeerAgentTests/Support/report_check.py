#!/usr/bin/env python3
"""Opens a `peer report` HTML page in headless Chromium with no network and checks what
it shows, for MarkerQualityTests.

  report_check.py REPORT.html --out SCREENSHOT.png

Starts Debian's chromedriver and `chromium` (headless, every host name unresolvable and
every proxied request refused, as chromium_peer.py does: the page must need nothing from
the network), loads the file, sizes the window to the whole page, takes a screenshot
(W3C WebDriver) and decodes it (PNG: zlib and the five row filters, here). For each
`section.plot` it prints the plot's title, the text of its SVG (axis labels, legend), its
rectangle on the page, and how many pixels inside that rectangle are drawn (not white)
and coloured (a plotted line: channels differing by more than 60). Also the requests the
page made to anything but file:// (Resource Timing), which must be none. One JSON object
on stdout; exit 1 on any failure to drive the browser.
"""
import argparse, base64, json, os, struct, subprocess, sys, time, zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from chromium_peer import CHROMIUM_ARGS, WebDriver, free_port  # noqa: E402


def decode_png(data):
    """(width, height, channels, rows of bytes) of an 8-bit RGB or RGBA PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack("!I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack("!IIBB", body[:10])
            if depth != 8 or colour not in (2, 6):
                raise ValueError(f"PNG depth {depth} colour type {colour}")
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev, off = [], bytearray(stride), 0
    for _ in range(height):
        f, line = raw[off], bytearray(raw[off + 1:off + 1 + stride])
        off += 1 + stride
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + a) & 0xFF
            elif f == 2:
                line[i] = (line[i] + b) & 0xFF
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(line)
        prev = line
    return width, height, channels, rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("report")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    port = free_port()
    driver = subprocess.Popen(["/usr/bin/chromedriver", f"--port={port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wd = WebDriver(port)
    try:
        wd.wait_ready()
        wd.start(CHROMIUM_ARGS + ["--window-size=1100,800", "--hide-scrollbars"])
        wd.go("file://" + os.path.abspath(a.report))
        height = wd.run("return Math.ceil(document.documentElement.scrollHeight);")
        wd.call("POST", f"/session/{wd.session}/window/rect", {"width": 1100, "height": int(height) + 200})
        time.sleep(0.5)
        plots = wd.run("""
            return [...document.querySelectorAll('section.plot')].map(s => {
              const svg = s.querySelector('svg'), r = (svg || s).getBoundingClientRect();
              return {title: s.dataset.title, svg: !!svg, texts: svg ? [...svg.querySelectorAll('text')].map(t => t.textContent.trim()).filter(Boolean) : [],
                      x: r.x + scrollX, y: r.y + scrollY, width: r.width, height: r.height};
            });""")
        requests = wd.run("return performance.getEntriesByType('resource').map(e => e.name).filter(n => !n.startsWith('file:'));")
        shot = base64.b64decode(wd.call("GET", f"/session/{wd.session}/screenshot"))
        with open(a.out, "wb") as f:
            f.write(shot)
        w, h, ch, rows = decode_png(shot)
        for p in plots:
            drawn = coloured = 0
            for y in range(max(0, int(p["y"])), min(h, int(p["y"] + p["height"]))):
                row = rows[y]
                for x in range(max(0, int(p["x"])), min(w, int(p["x"] + p["width"]))):
                    r, g, b = row[x * ch], row[x * ch + 1], row[x * ch + 2]
                    if r < 240 or g < 240 or b < 240:
                        drawn += 1
                    if max(r, g, b) - min(r, g, b) > 60:
                        coloured += 1
            p["drawnPixels"], p["colouredPixels"] = drawn, coloured
        print(json.dumps({"screenshot": {"width": w, "height": h}, "plots": plots, "requests": requests}))
        return 0
    except Exception as error:
        print(json.dumps({"error": f"{type(error).__name__}: {error}"}))
        return 1
    finally:
        wd.quit()
        driver.kill()


if __name__ == "__main__":
    sys.exit(main())
