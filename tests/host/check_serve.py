# SPDX-License-Identifier: GPL-2.0
"""nsdump --serve against a real Prometheus: see t_serve.sh.  TAP."""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vm"))
from tap import Tap  # noqa: E402

OBJ = sys.argv[1]
NSDUMP = os.path.join(OBJ, "nsdump")
KHZ = 2000000            # mkagg's tsc_khz
OM = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"
REGIONS = {0: "span", 2: "tcp", 10: "queue", 16: "udp"}
t = Tap()
tmp = tempfile.mkdtemp()
procs = []


def low(i):
    """nsl_agg_bucket_low()"""
    return i if i < 16 else (8 + i % 8) << (i // 8 - 1)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def get(url, accept=None, timeout=10):
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.read().decode()


def serve(env, *args):
    """nsdump --serve 0 ARGS in the background: (process, port, stderr path)."""
    err = os.path.join(tmp, "serve%d.err" % len(procs))
    e = dict(os.environ, ASAN_OPTIONS="verify_asan_link_order=0", **env)
    p = subprocess.Popen([NSDUMP, "--serve", "0"] + list(args), env=e,
                         stdout=subprocess.DEVNULL, stderr=open(err, "w"))
    procs.append(p)
    for _ in range(100):
        m = re.search(r"serving http://127\.0\.0\.1:(\d+)/metrics", open(err).read())
        if m:
            return p, int(m.group(1)), err
        time.sleep(0.05)
    raise RuntimeError("nsdump did not serve: " + open(err).read())


def mkagg(path, *args):
    out = subprocess.run([os.path.join(OBJ, "mkagg")] + list(args) + [path],
                         check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def labels(h):
    other = h["group"] == 0
    dev = "other" if other else ("lo" if h["ifindex"] == 1 else "if%d@%d" % (h["ifindex"], h["netns"]))
    fam = "other" if other else {2: "ipv4", 10: "ipv6"}.get(h["family"], "other")
    proto = "other" if other else {6: "tcp", 17: "udp"}.get(h["proto"], "other")
    return {"region": REGIONS[h["region"]], "dir": "rx" if h["dir"] else "tx",
            "dev": dev, "family": fam, "proto": proto}


def selector(lab, job="nsdump"):
    return ",".join(['%s="%s"' % kv for kv in sorted(lab.items())] + ['job="%s"' % job])


class Prom:
    def __init__(self, targets):
        self.port = free_port()
        cfg = os.path.join(tmp, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n")
            for job, port in targets.items():
                f.write("  - job_name: %s\n    static_configs:\n      - targets: ['127.0.0.1:%d']\n" % (job, port))
        self.p = subprocess.Popen(
            ["prometheus", "--config.file=" + cfg, "--storage.tsdb.path=" + os.path.join(tmp, "tsdb"),
             "--web.listen-address=127.0.0.1:%d" % self.port, "--enable-feature=exemplar-storage",
             "--log.level=warn"], stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "prom.err"), "w"))
        procs.append(self.p)
        self.url = "http://127.0.0.1:%d" % self.port
        self.wait(lambda: get(self.url + "/-/ready", timeout=1), 20)

    @staticmethod
    def wait(fn, seconds):
        end = time.time() + seconds
        while True:
            try:
                v = fn()
                if v:
                    return v
            except Exception:  # noqa: BLE001 (not up yet)
                pass
            if time.time() > end:
                return None
            time.sleep(0.2)

    def query(self, q):
        r = json.loads(get(self.url + "/api/v1/query?" + urllib.parse.urlencode({"query": q})))
        return r["data"]["result"]

    def value(self, q):
        r = self.query(q)
        return float(r[0]["value"][1]) if len(r) == 1 else None

    def until(self, q, want, seconds=8):
        return self.wait(lambda: self.value(q) == want, seconds)

    def exemplars(self, q):
        now = time.time()
        args = urllib.parse.urlencode({"query": q, "start": now - 60, "end": now + 1})
        return json.loads(get(self.url + "/api/v1/query_exemplars?" + args))["data"]


def true_bucket(buckets, q):
    """The kernel bucket that holds the q-quantile of a known histogram."""
    items = sorted((int(i), n) for i, n in buckets.items())
    rank, cum = q * sum(n for _, n in items), 0
    for i, n in items:
        cum += n
        if cum >= rank:
            return i
    return items[-1][0]


def check_quantiles(prom, known):
    bad = []
    for q in (0.5, 0.99):
        for h in known:
            lab = labels(h)
            got = prom.value("histogram_quantile(%g, netslice_region_latency_seconds_bucket{%s})" % (q, selector(lab)))
            i = true_bucket(h["buckets"], q)
            lo, hi = low(i) / (KHZ * 1e3), low(i + 1) / (KHZ * 1e3)
            if got is None or not lo * (1 - 1e-9) <= got <= hi * (1 + 1e-9):
                bad.append("%s p%g: %s not in [%g, %g]" % (lab, q * 100, got, lo, hi))
    t.ok(not bad, "prometheus: histogram_quantile 0.5 and 0.99 of %d series each in the bucket of the true quantile" % len(known),
         "\n".join(bad[:5]))


def check_counts(prom, known):
    bad = []
    for h in known:
        got = prom.value("netslice_region_latency_seconds_count{%s}" % selector(labels(h)))
        if got != sum(h["buckets"].values()):
            bad.append("%s: %s, want %d" % (labels(h), got, sum(h["buckets"].values())))
    t.ok(not bad, "prometheus: _count of every series the snapshot's count", "\n".join(bad[:5]))


def concurrent(port):
    """20 GETs at once, half OpenMetrics, a slow client holding a connection."""
    slow = socket.create_connection(("127.0.0.1", port))
    slow.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")   # never ends its head
    bodies, errors = [], []

    def one(k):
        try:
            bodies.append((k % 2, get("http://127.0.0.1:%d/metrics" % port, OM if k % 2 else None)))
        except Exception as e:  # noqa: BLE001
            errors.append(str(e))
    threads = [threading.Thread(target=one, args=(k,)) for k in range(20)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(15)
    slow.close()
    om = {b for k, b in bodies if k}
    text = {b for k, b in bodies if not k}
    t.ok(not errors and len(bodies) == 20 and len(om) == 1 and len(text) == 1 and
         om.pop().endswith("\n# EOF\n") and "# EOF" not in next(iter(text)),
         "concurrent: 20 scrapes with a slow client holding a connection, each whole, each format's alike",
         "errors %s, %d bodies, %d OpenMetrics and %d text versions" % (errors[:3], len(bodies), len(om), len(text)))
    return next(iter(text)) if text else ""


def promtool(text):
    r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    t.ok(r.returncode == 0, "promtool check metrics: the 0.0.4 text passes, lint included", r.stdout + r.stderr)


def check_dashboard(prom):
    """doc/grafana-netslice.json's queries, its variables as "all", run."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "doc", "grafana-netslice.json")
    dash = json.load(open(path))
    bad, n = [], 0
    for panel in dash["panels"]:
        for tg in panel["targets"]:
            q = tg["expr"]
            for var, val in (("$__rate_interval", "10s"), ("$region", "tcp"), ("$job", ".*"),
                             ("$dev", ".*"), ("$dir", ".*")):
                q = q.replace(var, val)
            n += 1
            try:
                prom.query(q)   # refused: HTTP 400, raised
                if not Prom.wait(lambda: prom.query(q), 5):
                    bad.append("no data: " + q)
            except Exception as e:  # noqa: BLE001 (a query Prometheus refuses)
                bad.append("%s: %s" % (e, q))
    t.ok(n > 5 and not bad, "grafana dashboard: its %d queries run and return data" % n, "\n".join(bad[:3]))


def phase_snapshot(prom, port, known):
    up = prom.until('up{job="nsdump"}', 1.0, 15)
    t.ok(up, "prometheus: up{job=\"nsdump\"} 1", open(os.path.join(tmp, "prom.err")).read()[-2000:])
    prom.until('count(netslice_region_latency_seconds_count{job="nsdump"})', float(len(known)))
    check_counts(prom, known)
    check_quantiles(prom, known)
    promtool(concurrent(port))
    check_dashboard(prom)


def phase_reload(prom, port, cur, err):
    tmpf = cur + ".new"
    small = mkagg(tmpf, "-L", "0x22", "-s", "1", "-z")
    os.rename(tmpf, cur)
    blocks = sum(sum(h["buckets"].values()) for h in small if h["region"] == 0)
    got = prom.until('netslice_blocks_total{job="nsdump"}', float(blocks), 10)
    said = Prom.wait(lambda: "a new load of the module (load id 22)" in open(err).read(), 5)
    resets = prom.value('resets(netslice_blocks_total{job="nsdump"}[2m])')
    t.ok(got and said and resets and resets >= 1,
         "reload: another load_id said on stderr, netslice_blocks_total %d, a counter reset to Prometheus" % blocks,
         "blocks %s, said %s, resets %s\n%s" % (got, said, resets, open(err).read()[-500:]))
    t.ok("aggregation stays off on this load" in open(err).read(),
         "reload: a new load that does not aggregate is set up (no device here: said)", open(err).read()[-500:])


def phase_gone(prom, port, cur, err):
    shutil.copy(cur, cur + ".kept")
    os.unlink(cur)
    down = prom.until('netslice_up{job="nsdump"}', 0.0, 10)
    text = get("http://127.0.0.1:%d/metrics" % port)
    t.ok(down and "netslice_up 0\n" in text and "netslice_blocks" not in text and
         open(err).read().count("netslice_up 0 until it is back") == 1,
         "gone: the file removed, netslice_up 0 (said once), still serving",
         open(err).read()[-500:])
    os.rename(cur + ".kept", cur)
    back = prom.until('netslice_up{job="nsdump"}', 1.0, 10)
    said = open(err).read()
    t.ok(back and "readable again, the same load" in said and said.count("a new load") == 1,
         "back: the same load again, netslice_up 1, said as such (not as a new load)", said[-500:])


def exemplar_lines(text):
    """(le, prev_le, cpu, seq, block, value) of each exemplar of the text."""
    out, prev = [], {}
    pat = re.compile(r'^netslice_region_latency_seconds_bucket\{(.*),le="([^"]+)"\} \d+'
                     r'(?: # \{trace_id="cpu(\d+):seq(\d+)",block="(\d+)"\} (\S+) (\S+))?$')
    for line in text.splitlines():
        m = pat.match(line)
        if not m:
            continue
        series, le = m.group(1), float(m.group(2))
        if m.group(3):
            out.append((le, prev.get(series), int(m.group(3)), int(m.group(4)), int(m.group(5)), float(m.group(6))))
        prev[series] = le
    return out


def phase_exemplars(prom, port, proc, wfile):
    text = get("http://127.0.0.1:%d/metrics" % port, OM)
    plain = get("http://127.0.0.1:%d/metrics" % port)
    ex = exemplar_lines(text)
    stored = Prom.wait(lambda: prom.exemplars('netslice_region_latency_seconds_bucket{job="exemplars"}'), 10)
    proc.terminate()
    proc.wait(10)
    blocks = [b for b in (json.loads(l) for l in subprocess.run(
        [NSDUMP, "-r", wfile, "--json"], capture_output=True, text=True).stdout.splitlines())
        if b.get("type") == "block"]
    bad = [e for e in ex if not (e[1] is None or e[1] <= e[5]) or not e[5] <= e[0] or
           not 1 <= e[4] <= len(blocks) or
           (blocks[e[4] - 1]["cpu"], blocks[e[4] - 1]["seq"]) != (e[2], e[3])]
    t.ok(ex and not bad and " # {" not in plain,
         "exemplars: %d, each within its bucket, its trace_id the cpu:seq of block N of the -w file; none in 0.0.4" % len(ex),
         "bad %s" % bad[:3])
    n = sum(len(s["exemplars"]) for s in stored or [])
    ids = {x["labels"].get("trace_id", "") for s in stored or [] for x in s["exemplars"]}
    t.ok(n > 0 and all(re.match(r"cpu\d+:seq\d+$", i) for i in ids),
         "exemplars: in Prometheus's exemplar storage (%d), trace_id cpuN:seqM" % n)


def main():
    started = time.time()
    cur = os.path.join(tmp, "cur.agg")
    known = mkagg(cur, "-L", "0x11", "-s", "3")
    raw, exagg, wfile = (os.path.join(tmp, n) for n in ("raw", "ex.agg", "ex.ns"))
    subprocess.run([os.path.join(OBJ, "mkblocks"), "-R", "-K", "-f", "-n", "48", raw], check=True)
    mkagg(exagg, "-f", raw, "-t", "30,60")
    _, port, err = serve({"NSDUMP_AGG": cur, "NSDUMP_DEV": os.path.join(tmp, "none")})
    exproc, export, _ = serve({"NSDUMP_AGG": exagg, "NSDUMP_DEV": raw, "NSFAKE_HOLD": "1",
                               "LD_PRELOAD": os.path.join(os.path.abspath(OBJ), "fakedev.so")},
                              "--exemplars", "all", "-w", wfile)
    prom = Prom({"nsdump": port, "exemplars": export})
    phase_snapshot(prom, port, known)
    phase_exemplars(prom, export, exproc, wfile)
    phase_reload(prom, port, cur, err)
    phase_gone(prom, port, cur, err)
    t.ok(time.time() - started < 60, "all of it in %.1f s (under 60)" % (time.time() - started))


try:
    main()
except Exception as e:  # noqa: BLE001 (a crash is a failure, said)
    t.ok(False, "check_serve: %s: %s" % (type(e).__name__, e))
finally:
    for p in procs:
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
    for p in procs[:2]:
        if p.returncode not in (0, -15, None):
            t.ok(False, "nsdump exited with status %s" % p.returncode)
    shutil.rmtree(tmp, ignore_errors=True)
sys.exit(t.done())
