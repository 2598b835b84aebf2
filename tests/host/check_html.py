# SPDX-License-Identifier: GPL-2.0
"""check_html.py static DIR | browser DIR CHROMIUM: the checks of t_html.sh
and t_html_browser.sh on the pages they left in DIR (v.html of mkblocks -V
400, oracle.jsonl: nsdump --json -M of the same file; nasty.html of a file
whose names and path need escaping).  TAP."""
import os
import sys
from html.parser import HTMLParser

# tap.py and nsjson.py live with the VM tests' helpers: one of each
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vm"))

import devices
from nsjson import nsdump_json, strict_json
from tap import Tap

mode, d = sys.argv[1], sys.argv[2]
t = Tap()
N, FIRST, SLOWEST = 400, 100, 100

# HTML's void elements; inside <svg> an element may close itself (<rect/>)
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link",
        "meta", "source", "track", "wbr"}


class Page(HTMLParser):
    """Every element closed, in order; the text and attributes kept."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.doctype = [], [], []
        self.elements = []      # (tag, attrs, path of open tags)
        self.text = {}          # id of the nearest element with one: its text

    def handle_decl(self, decl):
        self.doctype.append(decl)

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs), tuple(self.stack)))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.elements.append((tag, dict(attrs), tuple(self.stack)))
        if tag not in VOID and "svg" not in self.stack:
            self.errors.append("<%s/> outside svg" % tag)

    def handle_endtag(self, tag):
        if tag in VOID:
            self.errors.append("</%s> of a void element" % tag)
        elif not self.stack or self.stack[-1] != tag:
            self.errors.append("</%s> closes <%s>" % (tag, self.stack[-1] if self.stack else ""))
        else:
            self.stack.pop()

    def handle_data(self, data):
        key = self.stack[-1] if self.stack else ""
        self.text.setdefault(key, []).append(data)


def parse(path):
    with open(path, encoding="utf-8") as f:     # strict UTF-8
        src = f.read()
    p = Page()
    p.feed(src)
    p.close()
    return src, p


def text_of(src, start, end, sep=" "):
    """The text between two markers of the source, tags dropped (each
    piece of text apart: table cells do not run together)."""
    class T(HTMLParser):
        def __init__(self):
            super().__init__(convert_charrefs=True)
            self.parts = []

        def handle_data(self, data):
            self.parts.append(data)
    i = src.index(start)
    x = T()
    x.feed(src[i:src.index(end, i)])
    return sep.join(x.parts)


oracle = nsdump_json(os.path.join(d, "oracle.jsonl"))
blocks = [o for o in oracle if o["type"] == "block"]
table = [o for o in oracle if o["type"] == "table"][0]
regions = {r["region"]: r for r in table["regions"] if r["n"]}


def span(b):
    return max(r["start"] + r["ticks"] for r in b["records"] if "OPEN" not in r["flags"])


def expected_rows():
    rest = sorted(range(FIRST, len(blocks)), key=lambda i: (-span(blocks[i]), i))
    return list(range(min(FIRST, len(blocks)))), rest[:SLOWEST]


def static():
    with open(os.path.join(d, "rc")) as f:
        t.eq(f.read().strip(), "0", "--html: exit 0")
    t.eq(os.path.getsize(os.path.join(d, "out")), 0, "--html: no text on stdout (as -w)")
    src, p = parse(os.path.join(d, "v.html"))
    t.ok(not p.errors and not p.stack, "every element closed, in order (html.parser)",
         (p.errors[:5], p.stack))
    t.eq([x.lower() for x in p.doctype], ["doctype html"], "one <!DOCTYPE html>")
    outside = [(tag, a) for tag, a, _ in p.elements
               if "src" in a or tag in ("link", "img", "iframe", "object", "embed")
               or (a.get("href") is not None and not a["href"].startswith("#"))]
    t.ok(not outside and "url(" not in src and "@import" not in src,
         "self-contained: no src, no link, no href but #fragments, no url() or @import",
         outside[:3])
    t.ok(src.count("<script>") == 1 and src.count("<style>") == 1,
         "its CSS and JavaScript inline, once each")
    ids = [a["id"] for _, a, _ in p.elements if "id" in a]
    t.ok(len(ids) == len(set(ids)),
         "every id once", [i for i in ids if ids.count(i) > 1][:5])
    links = {a["href"][1:] for tag, a, _ in p.elements if tag == "a" and "href" in a}
    t.ok(links <= set(ids), "every #link has its target", sorted(links - set(ids)))

    first, slowest = expected_rows()
    got = rows_of(p)
    t.eq(got[:len(first)], first, "waterfall: the first %d blocks as they came" % FIRST)
    t.eq(got[len(first):], slowest,
         "waterfall: then the %d slowest of the others by span (NSI to last STOP), slowest first"
         % SLOWEST)
    said = text_of(src, '<h2 id="packets">', "</p>")
    t.ok("200 of 400 blocks drawn: the first 100 as they came, then the 100 slowest of the other 300" in said,
         "waterfall: says what it drew", said)

    figs = {a["data-region"]: a for tag, a, _ in p.elements
            if tag == "figure" and "dist" in a.get("class", "")}
    t.eq(sorted(figs), sorted(regions), "a distribution chart for each region with values")
    t.ok(all(int(figs[r]["data-n"]) == regions[r]["n"] for r in figs),
         "each chart's n is the table's (nsdump --json)")
    bins, marks = by_figure(p)
    t.ok(all(bins.get(r) == regions[r]["n"] for r in regions),
         "each chart's bins add up to its n", {r: (bins.get(r), regions[r]["n"]) for r in regions})
    want = {r: {"50": "%.3f" % regions[r]["p50"], "90": "%.3f" % regions[r]["p90"],
                "99": "%.3f" % regions[r]["p99"], "99.9": "%.3f" % regions[r]["p999"]}
            for r in regions}
    t.eq(marks, want, "p50, p90, p99, p99.9 marked where nsdump --json puts them")

    summary = text_of(src, '<h2 id="layers">', "</table>")
    bad = [r for r, v in regions.items()
           if " ".join([str(v["n"])] + ["%.3f" % v[k] for k in ("mean", "min", "p50", "p90", "p99", "p999", "max")])
           not in " ".join(summary.split())]
    t.ok(not bad, "per-layer table: n, mean, min, p50 .. max as nsdump --json says", bad)
    head = " ".join(text_of(src, "<table class=\"facts\">", "</table>").split())
    t.ok("400 blocks (300 send, 100 receive; 50 carry both paths" in head and
         "163 MAGNeT event records" in head and "3 items (blocks or event records) in 1 loss records" in head
         and "3000000 kHz" in head and "tau_o=10.0ns" in head and "cycles, instructions" in head,
         "header: counts, lost, TSC rate, calibration, counters", head)
    conns = [o for o in oracle if o["type"] == "conn"]
    magnet = " ".join(text_of(src, '<h2 id="magnet">', "Written by nsdump").split()) \
        if '<h2 id="magnet">' in src else ""
    t.ok(len(conns) == 1 and "conn 0x2a" in magnet and all(
        "%s %d" % (l["event"], l["n"]) in magnet for l in conns[0]["layers"]),
        "MAGNeT's Table III: the connection's layers and counts", magnet[:300])
    cnt = " ".join(text_of(src, '<h2 id="counters">', "</table>").split())
    t.ok("cycles mean" in cnt and "instructions mean" in cnt and "IPC" in cnt,
         "counters per layer, with IPC")
    nasty()
    live()
    empty()
    no_devices("v.html", "blocks without devices")
    no_devices("nasty.html", "a file of hostile names, without devices")
    devices_file()
    devices_live()


def read(name):
    with open(os.path.join(d, name), encoding="utf-8") as f:
        return f.read()


class Rows(HTMLParser):
    """The waterfall's rows: each one's devices cell (None: no such cell)
    and each bar's title, by record, as a reader sees the text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows = {}          # data-block: {"dev": text, "titles": {rec: text}}
        self.head = []          # every table's column headings
        self.row = self.into = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr" and "wf-row" in a.get("class", ""):
            self.row = self.rows.setdefault(int(a["data-block"]), {"dev": None, "titles": {}})
        elif tag == "td" and self.row is not None and a.get("class") == "wf-dev":
            self.row["dev"] = ""
            self.into = ("dev", None)
        elif tag == "rect" and self.row is not None and "data-rec" in a:
            self.rec = int(a["data-rec"])
        elif tag == "title" and self.row is not None:
            self.row["titles"][self.rec] = ""
            self.into = ("titles", self.rec)
        elif tag == "th":
            self.into = ("th", None)
            self.head.append("")

    def handle_endtag(self, tag):
        if tag in ("td", "title", "th"):
            self.into = None
        elif tag == "tr":
            self.row = None

    def handle_data(self, data):
        if self.into is None:
            return
        what, rec = self.into
        if what == "th":
            self.head[-1] += data
        elif what == "dev":
            self.row["dev"] += data
        else:
            self.row["titles"][rec] += data


def rows_parsed(name):
    r = Rows()
    with open(os.path.join(d, name), encoding="utf-8") as f:
        r.feed(f.read())
    r.close()
    return r


def check_devices(name, oracle_name, ours, what):
    """Each row's devices cell the block's path, each record's title its
    device by the ABI's rule (devices.py works both out on its own)."""
    r = rows_parsed(name)
    blocks = [o for o in nsdump_json(os.path.join(d, oracle_name)) if o["type"] == "block"]
    t.ok("devices" in r.head and sorted(r.rows) == list(range(len(blocks))),
         "%s: a devices column, a row per block" % what, (r.head, sorted(r.rows)))
    bad = [(i, r.rows[i]["dev"], devices.path(b, ours)) for i, b in enumerate(blocks)
           if r.rows[i]["dev"] != devices.path(b, ours)]
    t.ok(not bad, "%s: each row's devices cell is its path, '>' between devices" % what,
         bad[:5])
    bad = []
    for i, b in enumerate(blocks):
        for k, dev in enumerate(devices.record_devs(b, ours)):
            title = r.rows[i]["titles"].get(k, "")
            if ("; dev %s; " % dev) not in title or title.count("; dev ") != 1:
                bad.append((i, k, dev, title))
    t.ok(not bad, "%s: each bar's title (OPEN ones too) names the device its record belongs to"
         % what, bad[:5])
    return r, blocks


def devices_file():
    """mkblocks -W from a file: numbers, gen.h's paths."""
    ours = int(read("netns"))
    r, blocks = check_devices("dev.html", "dev.jsonl", None, "devices from a file")
    t.eq([r.rows[i]["dev"] for i in range(3)],
         ["if9@%d/tx>if1@%d/tx" % (ours, ours), "if8@%d/tx>if2@4026532253/rx" % ours,
          "if6@%d/tx" % ours], "devices from a file: gen.h's three paths, in order")
    with open(os.path.join(d, "dev.html"), encoding="utf-8") as f:
        src = f.read()
    t.ok('<td class="wf-dev">if9@%d/tx&gt;if1@%d/tx</td>' % (ours, ours) in src,
         "devices from a file: the path's '>' written as &gt;")
    t.ok("; dev if9@%d/tx; " % ours in r.rows[0]["titles"][4] and
         "; dev if1@%d/tx; " % ours in r.rows[0]["titles"][5],
         "devices from a file: block 0's first link on the VLAN (if9), its second on lo (if1)",
         r.rows[0]["titles"])


def devices_live():
    """The same paths live: our devices by name (lo), others by number."""
    r, _ = check_devices("devlive.html", "devlive.jsonl", int(read("netns")), "devices live")
    t.ok(r.rows[0]["dev"].endswith(">lo/tx"), "devices live: lo by its name", r.rows[0]["dev"])


def no_devices(name, what):
    """Blocks without devices: the waterfall as before there were any."""
    r = rows_parsed(name)
    t.ok(r.rows and "devices" not in r.head and
         all(x["dev"] is None and not any("; dev " in v for v in x["titles"].values())
             for x in r.rows.values()),
         "%s: no devices column, cell or device in a bar's title" % what)


def rows_of(p):
    return [int(a["data-block"]) for tag, a, _ in p.elements
            if tag == "tr" and "wf-row" in a.get("class", "")]


def live():
    """From the device: gen.h's 10 blocks (6 records), 2 loss items."""
    t.ok(read("live.rc").strip() == "0" and read("live.out") == "" and
         read("live.err").splitlines()[-1] == "10 blocks captured, 0 dropped by kernel",
         "live: --html and --export together, exit 0, no text, the statistics line",
         read("live.err"))
    src, p = parse(os.path.join(d, "live.html"))
    t.ok(not p.errors and not p.stack and rows_of(p) == list(range(10)) and
         text_of(src, "<h1>", "</h1>", "").endswith(": " + read("live.path").strip()),
         "live: the page, closed, a row per block, the device as its source")
    trace = strict_json(read("live.json"))
    ph = [e["ph"] for e in trace["traceEvents"]]
    t.ok(ph.count("X") == 60 and ph.count("i") == 2,
         "live: the trace, a slice per record (60), the 2 losses")


def empty():
    """No block at all: still a page and a trace."""
    src, p = parse(os.path.join(d, "empty.html"))
    said = text_of(src, '<h2 id="packets">', "</p>")
    t.ok(read("empty.rc").strip() == "0" and not p.errors and not p.stack and
         rows_of(p) == [] and "0 of 0 blocks drawn: all of them." in said,
         "no blocks: a page, closed, no row, saying so", (p.errors[:3], said))
    trace = strict_json(read("empty.json"))
    t.eq([e["ph"] for e in trace["traceEvents"]], [], "no blocks: a trace with no events")


def by_figure(p):
    """Each chart's sum of data-count over its bins, and its markers."""
    sums, marks, region = {}, {}, None
    for tag, a, path in p.elements:
        if tag == "figure":
            region = a.get("data-region")
        elif tag == "rect" and a.get("class") == "bin" and "figure" in path:
            sums[region] = sums.get(region, 0) + int(a["data-count"])
        elif tag == "g" and a.get("class") == "pct" and "figure" in path:
            marks.setdefault(region, {})[a["data-pct"]] = a["data-us"]
    return sums, marks


def nasty():
    """Names from the trace and the path, escaped where they appear."""
    with open(os.path.join(d, "nasty.path"), encoding="utf-8") as f:
        path = f.read().rstrip("\n")
    src, p = parse(os.path.join(d, "nasty.html"))
    t.ok(not p.errors and not p.stack, "a page of hostile names: every element still closed",
         (p.errors[:5], p.stack))
    h1 = text_of(src, "<h1>", "</h1>", "")
    t.eq(h1, "NetSlice per-packet, per-layer latency: " + path, "the path in <h1>, as text")
    t.ok(not any(tag == "b" and "h1" in where for tag, _, where in p.elements),
         "the path's <b> is no element")

    def shown(raw):     # as a reader sees it: invalid UTF-8 and controls replaced
        s = raw.decode("utf-8", "replace")
        return "".join("\ufffd" if ord(c) < 32 and c not in "\n\t" else c for c in s)
    names = [b'cyc"les\\', b"in\x01st\x1f\n\t",
             b"\xff\xfe bad \xc3( \xed\xa0\x80 \xf4\x90\x80\x80 \xc0\xaf \xe2\x82",
             b"ok \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \x7f"]
    cnt = text_of(src, '<h2 id="counters">', "</tr>")
    t.ok(all(shown(n) + " mean" in cnt for n in names),
         "event names (quotes, backslash, controls, ill-formed UTF-8) in the counters' headings, repaired",
         cnt)
    model = " ".join(text_of(src, "<table class=\"facts\">", "</table>").split())
    t.ok(shown(b'Model "X" \\ \x1b[31m \xc0\xaf\xf8') in model, "the CPU model, repaired", model)


def browser(chromium):
    import cdp
    first, slowest = expected_rows()
    url = "file://" + os.path.abspath(os.path.join(d, "v.html"))
    with cdp.Browser(chromium) as b:
        b.load(url, width=1400, height=1000)
        t.eq(b.errors, [], "no JavaScript error, exception or console error")
        t.eq(b.requests, [url], "the page asked for nothing but itself")
        t.eq(b.evaluate("document.body.dataset.ready"), "1", "its script ran to the end")
        t.eq(b.evaluate("[...document.querySelectorAll('tr.wf-row')]"
                        ".filter(r => r.getBoundingClientRect().height > 0).length"),
             len(first) + len(slowest), "waterfall rows drawn: one per block drawn")
        geometry(b)
        sizes = b.evaluate("Object.fromEntries([...document.querySelectorAll('figure.dist')]"
                           ".map(f => [f.dataset.region, [f.querySelector('svg').getBoundingClientRect().width,"
                           " f.querySelectorAll('rect.bin').length]]))")
        t.ok(sorted(sizes) == sorted(regions) and all(w > 400 and n > 0 for w, n in sizes.values()),
             "a chart drawn for each region present, with bars", sizes)
        b.evaluate("document.querySelector('#wf-first rect.bar[data-region=\"nic\"]')"
                   ".dispatchEvent(new MouseEvent('mouseenter'))")
        hl = b.evaluate("[document.querySelectorAll('rect.bar.hl').length,"
                        " document.querySelectorAll('rect.bar[data-region=\"nic\"]').length,"
                        " document.getElementById('wf-info').textContent]")
        t.ok(hl[0] == hl[1] > 0 and hl[2].startswith("nic: "),
             "hovering a bar outlines its region in every row and shows its title", hl)
        top = b.screenshot((0, 0, 1400, 900))
        y = b.evaluate("document.getElementById('packets').getBoundingClientRect().top + scrollY")
        fall = b.screenshot((0, y, 1400, 700))
        t.eq(b.errors, [], "still no error after hovering and screenshots")
    out = os.environ.get("SHOTS")
    for name, png in (("top", top), ("waterfall", fall)):
        if out:
            with open(os.path.join(out, "html-%s.png" % name), "wb") as f:
                f.write(png)
        colours, share = cdp.png_colours(png)
        t.ok(colours >= 16 and share >= 0.05,
             "screenshot of the %s: a picture, not a blank page (%d colours, %.0f %% not background)"
             % (name, colours, share * 100))


def geometry(b):
    """Block 0's bars (genviews.h) where its ticks put them, nested."""
    bars = b.evaluate("""(() => {
        const row = document.querySelector('#wf-first tr.wf-row[data-block="0"]');
        const svg = row.querySelector('svg').getBoundingClientRect();
        const table = document.getElementById('wf-first');
        return {px0: +table.dataset.px0, pxPerUs: +table.dataset.pxPerUs,
                bars: [...row.querySelectorAll('rect.bar')].map(r => {
                    const g = r.getBoundingClientRect();
                    return {rec: +r.dataset.rec, region: r.dataset.region,
                            level: +r.dataset.level, x: g.left - svg.left,
                            y: g.top - svg.top, w: g.width, h: g.height};
                })};
    })()""")
    # start, ticks, parent record (genviews.h's block 0)
    want = {0: (0, 15000, None), 1: (150, 1200, 0), 2: (1500, 6000, 0), 3: (7650, 600, 0),
            4: (8400, 900, 0), 5: (9450, 5100, 0), 6: (9900, 4200, 5), 7: (15300, 24000, None)}
    got = {x["rec"]: x for x in bars["bars"]}
    t.eq(sorted(got), sorted(want), "block 0: a bar per record")
    scale = bars["pxPerUs"] / 3000  # px per tick at 3 GHz
    off = [(k, round(got[k]["x"] - (bars["px0"] + s * scale), 2), round(got[k]["w"] - n * scale, 2))
           for k, (s, n, _) in want.items()
           if abs(got[k]["x"] - (bars["px0"] + s * scale)) > 0.05 or abs(got[k]["w"] - n * scale) > 0.05]
    t.ok(not off, "block 0: each bar at px0 + start, as wide as its ticks, on the table's scale "
         "(within 0.05 px)", off)
    out = [k for k, (_, _, p) in want.items() if p is not None and not (
        got[p]["x"] <= got[k]["x"] and got[k]["x"] + got[k]["w"] <= got[p]["x"] + got[p]["w"] + 1e-6
        and got[p]["y"] < got[k]["y"] and got[k]["y"] + got[k]["h"] < got[p]["y"] + got[p]["h"])]
    t.ok(not out, "block 0: each nested bar drawn inside its parent's, inset", out)
    t.eq([got[k]["level"] for k in sorted(got)], [0, 1, 1, 1, 1, 1, 2, 0],
         "block 0: levels write 0, tcp..link 1, qdisc 2, nic 0")


if mode == "static":
    static()
else:
    browser(sys.argv[3])
sys.exit(t.done())
