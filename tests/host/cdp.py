# SPDX-License-Identifier: GPL-2.0
"""A headless Chromium driven over the DevTools protocol, Python's standard
library only: the browser is started with --remote-debugging-pipe and
reads commands on fd 3, answers on fd 4, each message JSON ended by a NUL
byte (no websocket, no port).

    with Browser("/usr/bin/chromium") as b:
        b.load("file:///tmp/report.html", width=1400)
        b.evaluate("document.title")
        png = b.screenshot()            # the whole page, PNG bytes
        b.errors                        # exceptions, console errors, log errors
        b.requests                      # every URL the page asked for

Also a PNG reader (png_pixels) to tell a picture from a blank page.
"""
import base64
import json
import os
import select
import shutil
import struct
import subprocess
import tempfile
import time
import zlib

# As the project's README says: without the background-networking flags a
# headless Chromium waits on connections this machine cannot make.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--remote-debugging-pipe"]


class BrowserError(Exception):
    pass


class Browser:
    def __init__(self, path="/usr/bin/chromium", timeout=60):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="nsdump-cdp-")
        to_browser, self.w = os.pipe()
        self.r, from_browser = os.pipe()

        def fds():  # the browser's fd 3 reads commands, fd 4 answers
            # by way of fds out of the way: the pipe may be 3 and 4 already,
            # and a dup2 onto itself would leave it close-on-exec
            os.dup2(to_browser, 1000)
            os.dup2(from_browser, 1001)
            os.dup2(1000, 3)
            os.dup2(1001, 4)

        # close_fds would close 3 and 4 after fds() made them
        self.proc = subprocess.Popen(
            [path] + FLAGS + ["--user-data-dir=" + self.profile, "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, close_fds=False, preexec_fn=fds)
        os.close(to_browser)
        os.close(from_browser)
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.errors = []
        self.requests = []
        self.session = None

    def __enter__(self):
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target,
                                 flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(domain + ".enable")
        return self

    def __exit__(self, *exc):
        try:
            self.call("Browser.close", session=False)
        except (BrowserError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.r)
        os.close(self.w)
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read_message(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.r], [], [], left)[0]:
                raise BrowserError("no answer from the browser in %d s" % self.timeout)
            chunk = os.read(self.r, 1 << 20)
            if not chunk:
                raise BrowserError("the browser went away")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def _note(self, msg):
        """Keep what a test asks about: errors and requests."""
        method, p = msg.get("method"), msg.get("params", {})
        self.events.append(msg)
        if method == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            self.errors.append("exception: %s" % d.get("exception", {}).get(
                "description", d.get("text")))
        elif method == "Runtime.consoleAPICalled" and p["type"] in ("error", "assert"):
            self.errors.append("console.%s: %s" % (p["type"], " ".join(
                str(a.get("value", a.get("description"))) for a in p["args"])))
        elif method == "Log.entryAdded" and p["entry"]["level"] == "error":
            self.errors.append("log: %s" % p["entry"]["text"])
        elif method == "Network.requestWillBeSent":
            self.requests.append(p["request"]["url"])

    def call(self, method, session=True, **params):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            answer = self._read_message(deadline)
            if answer.get("id") != self.next_id:
                self._note(answer)
                continue
            if "error" in answer:
                raise BrowserError("%s: %s" % (method, answer["error"]))
            return answer["result"]

    def wait_for(self, method):
        deadline = time.monotonic() + self.timeout
        while not any(e.get("method") == method for e in self.events):
            self._note(self._read_message(deadline))

    def load(self, url, width=1400, height=1000):
        self.call("Emulation.setDeviceMetricsOverride", width=width,
                  height=height, deviceScaleFactor=1, mobile=False)
        self.events = []
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression):
        r = self.call("Runtime.evaluate", expression=expression,
                      returnByValue=True)
        if "exceptionDetails" in r:
            raise BrowserError("evaluate: %s" % r["exceptionDetails"])
        return r["result"].get("value")

    def screenshot(self, clip=None):
        """PNG bytes of @clip (x, y, width, height in CSS px), else the page."""
        if clip is None:
            size = self.evaluate("[document.documentElement.scrollWidth,"
                                 " document.documentElement.scrollHeight]")
            clip = (0, 0, size[0], size[1])
        x, y, w, h = clip
        r = self.call("Page.captureScreenshot", format="png",
                      captureBeyondViewport=True,
                      clip={"x": x, "y": y, "width": w, "height": h, "scale": 1})
        return base64.b64decode(r["data"])


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def png_pixels(data):
    """(width, height, rows of bytes, bytes per pixel) of an 8-bit RGB(A)
    PNG, its scanlines unfiltered (PNG spec, section 9)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            if depth != 8 or colour not in (2, 6):
                raise ValueError("PNG depth %d colour type %d" % (depth, colour))
            bpp = 4 if colour == 6 else 3
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], None
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        up = prev or bytearray(stride)
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            c = up[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + up[i]) & 255
            elif f == 3:
                line[i] = (line[i] + ((a + up[i]) >> 1)) & 255
            elif f == 4:
                line[i] = (line[i] + _paeth(a, up[i], c)) & 255
        rows.append(line)
        prev = line
    return width, height, rows, bpp


def png_colours(data):
    """The distinct colours of a PNG and the share of pixels that are not
    its most common colour (the background)."""
    width, height, rows, bpp = png_pixels(data)
    counts = {}
    for line in rows:
        for x in range(0, width * bpp, bpp):
            px = bytes(line[x:x + 3])
            counts[px] = counts.get(px, 0) + 1
    background = max(counts.values())
    return len(counts), 1 - background / (width * height)
