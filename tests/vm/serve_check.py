#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""nsdump --serve against a real Prometheus, in the VM (t_serve.sh).

    serve_check.py settle PPORT SPORT   waits until Prometheus holds the
                 span count nsdump serves now, and that it stays; prints
                 nsdump's exposition parsed (JSON)
    serve_check.py agree PPORT E0 SETTLE TABLE
                 the quantiles and counts Prometheus answers against
                 nsdump's table of the full capture (lines for tap_lines)
    serve_check.py exemplar PPORT SINCE an exemplar Prometheus stored
                 since the time SINCE, as JSON {trace_id, block, value}
    serve_check.py in_capture EXEMPLAR TRACE  that block in the capture
    serve_check.py scrape SPORT         one scrape, as text
    serve_check.py reload R0 R1 R2 LOG  what a reload under --serve shows

The exposition is parsed by hand here (the text format is one sample a
line); Prometheus parses it for real, and its answers are what count.
"""
import json
import re
import sys
import time
import urllib.parse
import urllib.request

SUB, NBUCKETS = 8, 256
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)')
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def scrape(port, om=False):
    req = urllib.request.Request("http://127.0.0.1:%d/metrics" % port)
    if om:
        req.add_header("Accept", "application/openmetrics-text;"
                       "version=1.0.0")
    with urllib.request.urlopen(req, timeout=60) as r:
        return r.read().decode()


def samples(text):
    for line in text.splitlines():
        m = SAMPLE.match(line)
        if m:
            yield m.group(1), dict(LABEL.findall(m.group(2) or "")), \
                float(m.group(3))


def promql(pport, q, at=None):
    args = {"query": q}
    if at is not None:
        args["time"] = at
    url = "http://127.0.0.1:%d/api/v1/query?%s" % (
        pport, urllib.parse.urlencode(args))
    with urllib.request.urlopen(url, timeout=60) as r:
        o = json.load(r)
    if o["status"] != "success":
        raise SystemExit("%s: %s" % (q, o))
    return o["data"]["result"]


def scalar(pport, q, at=None):
    res = promql(pport, q, at)
    return float(res[0]["value"][1]) if res else None


def span_count(text):
    return sum(v for n, lab, v in samples(text)
               if n == "netslice_region_latency_seconds_count"
               and lab.get("region") == "span")


def cmd_settle(pport, sport):
    want, got, now, deadline = None, None, None, time.time() + 120
    while time.time() < deadline:
        try:
            text = scrape(int(sport))
            now = span_count(text)
            got = scalar(int(pport), 'sum(netslice_region_latency_seconds_'
                         'count{region="span"})')
        except OSError as e:    # a timeout under TCG: try again
            print("# %s" % e, file=sys.stderr)
            continue
        if got == now and now == want:
            served = {n + json.dumps(lab, sort_keys=True): v
                      for n, lab, v in samples(text)}
            served["time"] = time.time()
            print(json.dumps(served))
            print("# the last scrape took %s s" % scalar(
                int(pport), "scrape_duration_seconds"), file=sys.stderr)
            return 0
        want = now
        time.sleep(1.5)
    print("# Prometheus has %s, nsdump serves %s; up %s, the last scrape "
          "took %s s" % (got, now, scalar(int(pport), "up"),
                         scalar(int(pport), "scrape_duration_seconds")),
          file=sys.stderr)
    return 1


def bucket(v):
    if v < 2 * SUB:
        return int(v)
    e = int(v).bit_length() - 1
    return min(SUB * (e - 2) + ((int(v) >> (e - 3)) & (SUB - 1)),
               NBUCKETS - 1)


def low(i):
    return i if i < 2 * SUB else (SUB + i % SUB) << (i // SUB - 1)


def check(ok, what):
    print("%s %s" % ("ok" if ok else "fail", what))


# The last value of a series up to the query's time: a scrape that timed
# out under TCG marks every series stale, which an instant query then
# finds empty; over a range the marker is no sample, and values only grow.
def last(sel):
    return "max_over_time(%s[2m])" % sel


def cmd_agree(pport, e0, settle, table):
    pport = int(pport)
    with open(settle) as f:
        text = f.read()
    if not text.strip():    # settle gave up, and said why
        check(False, "Prometheus and nsdump agree: nothing settled to "
              "compare (%s is empty)" % settle)
        return 1
    served = json.loads(text)
    at = served["time"]     # nsdump stopped since: its series are stale
    rows = [json.loads(l) for l in open(table) if l.strip()]
    tab = [o for o in rows if o.get("type") == "table"][0]
    khz = tab["tsc_khz"]
    emitted = [v for k, v in served.items()
               if k.startswith("netslice_emitted_blocks")][0]
    count = scalar(pport, 'sum(%s)' % last('netslice_region_latency_'
                   'seconds_count{region="span"}'), at)
    made = emitted - int(e0)
    check(count == tab["blocks"] and tab["lost"] == 0,
          "the span histograms count every block, all of them exemplars: "
          "as many as the full capture holds (%s, %d, %d lost)"
          % (count, tab["blocks"], tab["lost"]))
    check(count is not None and count <= made,
          "no more than the core made (%d; %s refused by the filter "
          "before the ring)" % (made, made - (count or 0)))
    n = 0
    for reg in tab["regions"]:
        if not reg.get("n"):
            continue
        got = scalar(pport, 'sum(%s)' % last('netslice_region_latency_'
                     'seconds_count{region="%s"}' % reg["region"]), at)
        check(got == reg["n"], "%s: Prometheus counts %s values, nsdump's "
              "table %d" % (reg["region"], got, reg["n"]))
        for q, key in ((0.5, "p50"), (0.99, "p99")):
            # A quantile with few values past it is one value or the next
            # (a tail's buckets lie far apart): compared where ten or more
            # lie on each side.
            if min(q, 1 - q) * reg["n"] < 10:
                continue
            mine = reg[key] * khz / 1000.0          # µs to ticks
            got = scalar(pport, 'histogram_quantile(%s, sum by (le) (%s))'
                         % (q, last('netslice_region_latency_seconds_bucket'
                                    '{region="%s"}' % reg["region"])), at)
            got_t = got * khz * 1000.0 if got is not None else -1
            i = bucket(mine)
            width = low(i + 1) - low(i)
            check(abs(got_t - mine) <= width + 1,
                  "%s %s: Prometheus %.0f ticks, nsdump %.0f, within the "
                  "bucket's %d" % (reg["region"], key, got_t, mine, width))
            n += 1
    check(n >= 8, "%d quantiles compared" % n)
    return 0


def cmd_exemplar(pport, since):
    deadline = time.time() + 60
    while time.time() < deadline:
        url = "http://127.0.0.1:%d/api/v1/query_exemplars?%s" % (
            int(pport), urllib.parse.urlencode({
                "query": "netslice_region_latency_seconds_bucket",
                "start": since, "end": time.time()}))
        with urllib.request.urlopen(url, timeout=60) as r:
            data = json.load(r)["data"]
        for series in data:
            for ex in series["exemplars"]:
                lab = ex["labels"]
                print(json.dumps({"trace_id": lab["trace_id"],
                                  "block": int(lab.get("block", 0)),
                                  "value": float(ex["value"]),
                                  "region": series["seriesLabels"]["region"]
                                  }))
                return 0
        time.sleep(2)
    return 1


def cmd_in_capture(exemplar, trace):
    """The file walked from its bytes (nspath), in the order written."""
    import nspath
    ex = json.load(open(exemplar))
    cpu, seq = re.match(r"cpu(\d+):seq(\d+)$", ex["trace_id"]).groups()
    blocks = list(nspath.blocks(trace))
    hit = [b for b in blocks if b["cpu"] == int(cpu) and
           b["seq"] == int(seq)]
    check(len(hit) == 1, "exemplar %s is in the exemplar capture, one of "
          "%d blocks" % (ex["trace_id"], len(blocks)))
    if ex["block"]:
        at = blocks[ex["block"] - 1] if ex["block"] <= len(blocks) else {}
        check(at is (hit or [None])[0],
              "and it is block %d of the file, as the exemplar says "
              "(that one is cpu%s:seq%s; the exemplar's is number %s)"
              % (ex["block"], at.get("cpu"), at.get("seq"),
                 [i + 1 for i, b in enumerate(blocks) if b in hit]))


def cmd_scrape(sport):
    sys.stdout.write(scrape(int(sport)))


def value(text, name):
    return sum(v for n, lab, v in samples(text) if n == name)


def cmd_reload(r0, r1, r2, log):
    t0, t1, t2 = (open(p).read() for p in (r0, r1, r2))
    err = open(log).read()
    check(value(t0, "netslice_up") == 1 and value(t0, "netslice_blocks_total") > 0,
          "before: up, %d blocks" % value(t0, "netslice_blocks_total"))
    check(value(t1, "netslice_up") == 0, "module gone: netslice_up 0")
    check(value(t2, "netslice_up") == 1 and
          value(t2, "netslice_blocks_total") < value(t0, "netslice_blocks_total"),
          "loaded again: up, its counters start again (%d blocks)"
          % value(t2, "netslice_blocks_total"))
    check("a new load of the module" in err and
          "aggregation switched on" in err,
          "nsdump says so, and switches aggregation on again")


def main(argv):
    cmds = {"settle": cmd_settle, "agree": cmd_agree,
            "exemplar": cmd_exemplar, "in_capture": cmd_in_capture,
            "scrape": cmd_scrape, "reload": cmd_reload}
    if len(argv) < 2 or argv[1] not in cmds:
        sys.exit(__doc__)
    return cmds[argv[1]](*argv[2:]) or 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
