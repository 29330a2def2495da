#!/usr/bin/python3
"""The JSON API of ufno_server with good and bad requests, against a real server process.

Usage: test_api.py UFNO_SERVER. Starts servers on free ports (--port 0) with the shipped models
and example sites, and checks: /api/info; a good prediction (fields, KPIs, download of an HDF5
result); malformed JSON (400); out-of-range and unknown parameters (422 naming the field);
an unknown route (404); an oversized upload (413); an uploaded example case (200) and an uploaded
non-HDF5 file (422); concurrent requests batched into one forward pass; a full queue (503).
Prints "N passed, M failed" last; exit 1 on failure.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.request
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
results = []


def check(name, cond, detail=""):
    results.append(bool(cond))
    print(("PASS " if cond else "FAIL ") + name + ("" if cond else ": " + str(detail)), flush=True)


class Server:
    """A real ufno_server on a free port; `env`: more environment variables (the fault tests')."""

    def __init__(self, exe, *args, env=None):
        env = dict(os.environ, OMP_NUM_THREADS="1", **(env or {}))
        self.p = subprocess.Popen([exe, "--port", "0", "--threads", "1"] + list(args),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=env)
        line = self.p.stdout.readline()
        if "listening on " not in line:
            raise RuntimeError("server did not start: " + line + self.p.stderr.read())
        self.url = line.split("listening on ")[1].split()[0]

    def stop(self):
        self.p.terminate()
        try:
            return self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return -1


def call(url, data=None, content_type="application/json", method=None):
    """(status, body bytes, headers) of one request; HTTP errors are results, not exceptions."""
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, r.read(), r.headers
    except urllib.error.HTTPError as e:
        return e.code, e.read(), e.headers


def post_json(base, body):
    status, raw, _ = call(base + "/api/predict", json.dumps(body).encode())
    return status, json.loads(raw)


def multipart(fields):
    """Encodes {name: (filename or None, bytes)} as multipart/form-data."""
    boundary = uuid.uuid4().hex
    out = b""
    for name, (filename, content) in fields.items():
        disp = 'form-data; name="%s"' % name + ('; filename="%s"' % filename if filename else "")
        out += b"--" + boundary.encode() + b"\r\nContent-Disposition: " + disp.encode() + \
            b"\r\n\r\n" + content + b"\r\n"
    out += b"--" + boundary.encode() + b"--\r\n"
    return out, "multipart/form-data; boundary=" + boundary


def basic(exe):
    s = Server(exe, "--max-upload-mb", "2")
    base = s.url
    try:
        status, raw, _ = call(base + "/api/info")
        info = json.loads(raw)
        check("info lists models, grid and sites", status == 200 and info["sites"] and
              info["grid"]["times"] == 24, raw[:200])
        status, raw, _ = call(base + "/")
        check("the page is served", status == 200 and b"<html" in raw.lower(), status)

        status, r = post_json(base, {"rate_mt_per_year": 1.2, "temperature_c": 70,
                                     "pressure_bar": 180, "field": "geostat",
                                     "geostat": {"kgeo_md": 150, "seed": 7}})
        check("a good request predicts (200)", status == 200, r)
        if status == 200:
            g = r["grid"]
            n = g["layers"] * g["radial_cells"] * g["times"]
            check("both fields with units and full size",
                  len(r["fields"]["SG"]["values"]) == n and len(r["fields"]["dP"]["values"]) == n
                  and r["fields"]["dP"]["units"], {k: len(v["values"]) for k, v in
                                                   r["fields"].items()})
            sg = r["fields"]["SG"]["values"]
            check("the plume is there: SG > 0 somewhere and within [0, 1]",
                  max(sg) > 0.01 and min(sg) >= -0.05 and max(sg) <= 1.05, (min(sg), max(sg)))
            k = r["kpis"]
            check("KPIs: plume radius grows, max dP positive, CO2 mass positive",
                  k["plume"][-1]["plume_radius_m"] >= k["plume"][0]["plume_radius_m"] > 0
                  and k["max_dp_bar"] > 0 and k["co2_mass_mt"] > 0, k)
            check("KPIs: the shipped models' heads give the plume radius and maximum dP, the "
                  "field's radius beside it",
                  k["plume_source"] == "head" and k["max_dp_source"] == "head" and
                  k["mass_source"] == "head" and k["co2_mass_field_mt"] > 0 and
                  abs(k["co2_mass_mt"] - k["mass_ratio"] * k["injected_mt"]) < 1e-9 and
                  all(p["plume_radius_field_m"] > 0 for p in k["plume"]), k)
            check("KPIs: the shipped heads' 90 % intervals hold their estimates, with a note",
                  k["max_dp_bar_lo"] < k["max_dp_bar"] < k["max_dp_bar_hi"] and
                  k["co2_mass_mt_lo"] < k["co2_mass_mt"] < k["co2_mass_mt_hi"] and
                  all(p["plume_radius_m_lo"] <= p["plume_radius_m"] <= p["plume_radius_m_hi"]
                      for p in k["plume"]) and
                  k["max_dp_interval"] in (1, 2) and
                  k["interval_notes"]["max_dp_bar"].startswith(("90 %", "this input")), k)
            status, raw, headers = call(base + r["download"])
            check("the result file downloads as HDF5", status == 200 and
                  raw[:8] == b"\x89HDF\r\n\x1a\n", (status, raw[:8]))
        status, raw, _ = call(base + "/api/results/r999999.h5")
        check("an unknown result is 404 JSON", status == 404 and "error" in json.loads(raw), raw)

        status, raw, _ = call(base + "/api/predict", b'{"rate_mt_per_year": 1.0,')
        check("malformed JSON is 400 with a message", status == 400 and
              "malformed JSON" in json.loads(raw)["error"], raw)
        # A limit on the maximum dP: below, above or across its 90 % interval, in words.
        for limit, want in ((0.5, "above"), (5000, "below")):
            status, r = post_json(base, {"rate_mt_per_year": 1.0, "max_dp_limit_bar": limit})
            d = r.get("kpis", {}).get("decision", {}) if status == 200 else {}
            check("a max-dP limit of %g bar is %s the interval" % (limit, want),
                  status == 200 and d.get("decision") == want and d.get("threshold") == limit
                  and d.get("says"), (status, d))
        status, r = post_json(base, {"max_dp_limit_bar": -1})
        check("a negative limit is 422 naming the field", status == 422 and
              r["field"] == "max_dp_limit_bar", r)
        status, raw, _ = call(base + "/api/predict", b'{"max_dp_limit_bar": NaN}')
        check("a NaN limit is refused (400 or 422)", status in (400, 422), raw[:200])
        status, r = post_json(base, {"rate_mt_per_year": -3})
        check("a negative rate is 422 naming the field", status == 422 and
              r["field"] == "rate_mt_per_year", r)
        status, r = post_json(base, {"swi": "high"})
        check("a non-number is 422 naming the field", status == 422 and r["field"] == "swi", r)
        status, r = post_json(base, {"rate": 1})
        check("an unknown parameter is 422 naming it", status == 422 and r["field"] == "rate", r)
        status, r = post_json(base, {"perf_top": 5, "perf_bottom": 2})
        check("an inverted perforation is 422", status == 422 and r["field"] == "perf_top", r)
        status, r = post_json(base, {"site": "nowhere"})
        check("an unknown site is 422", status == 422 and r["field"] == "site", r)
        status, r = post_json(base, {"field": "geostat", "geostat": {"sigma_lnk": 9}})
        check("a bad geostat value is 422 naming the nested field", status == 422 and
              r["field"] == "geostat.sigma_lnk", r)
        status, raw, _ = call(base + "/api/nothing")
        check("an unknown route is 404 JSON", status == 404 and "error" in json.loads(raw), raw)

        example = sorted(glob.glob(os.path.join(ROOT, "examples", "opm", "*", "case.h5")))[0]
        with open(example, "rb") as f:
            body, ct = multipart({"case": ("case.h5", f.read())})
        status, raw, _ = call(base + "/api/predict/upload", body, ct)
        r = json.loads(raw)
        check("an uploaded example case predicts (200)", status == 200 and "kpis" in r, raw[:300])
        body, ct = multipart({"case": ("notes.h5", b"this is not an HDF5 file\n" * 10)})
        status, raw, _ = call(base + "/api/predict/upload", body, ct)
        r = json.loads(raw)
        check("a non-HDF5 upload is 422 naming the user's file", status == 422 and
              "notes.h5" in r["error"] and "upload_" not in r["error"], r)
        body, ct = multipart({"case": ("big.h5", b"\0" * (3 * 1024 * 1024))})
        status, raw, _ = call(base + "/api/predict/upload", body, ct)
        check("an upload over --max-upload-mb is 413", status == 413, (status, raw[:200]))
        status, raw, _ = call(base + "/api/predict/upload", b'{"a": 1}')
        check("an upload without a case file is 400", status == 400, (status, raw[:200]))
        status, raw, _ = call(base + "/api/verify/r999999", b"", method="POST")
        check("verifying an unknown result is 404", status == 404, (status, raw[:200]))
    finally:
        check("the server stops cleanly on SIGTERM", s.stop() == 0)


def concurrent(exe, n, *args):
    s = Server(exe, *args)
    replies = [None] * n

    def one(i):
        replies[i] = post_json(s.url, {"rate_mt_per_year": 0.5 + 0.2 * i})
    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stats = json.loads(call(s.url + "/api/info")[1])["stats"]
    s.stop()
    return replies, stats


def batching(exe):
    replies, stats = concurrent(exe, 4, "--batch-window-ms", "1500", "--max-batch", "4")
    check("four concurrent requests all succeed", all(r and r[0] == 200 for r in replies),
          [r and r[0] for r in replies])
    check("they share forward passes (largest batch > 1)", stats["largest_batch"] > 1 and
          max(r[1].get("batch_size", 0) for r in replies) > 1, stats)
    if all(r and r[0] == 200 for r in replies):
        radii = [r[1]["kpis"]["plume"][-1]["plume_radius_m"] for r in replies]
        dps = [r[1]["kpis"]["max_dp_bar"] for r in replies]
        check("each user gets their own case back (different rates, different max dP)",
              len(set(dps)) == 4, (radii, dps))
    replies, stats = concurrent(exe, 4, "--batch-window-ms", "1500", "--max-queue", "2")
    codes = sorted(r[0] for r in replies)
    check("beyond --max-queue requests get 503, the queued ones are answered",
          codes.count(200) >= 2 and codes.count(503) >= 1 and set(codes) <= {200, 503}, codes)


def raw_request(url, head, body=b""):
    """Sends bytes as they are (chunked bodies, odd headers) and returns the status code."""
    import socket
    host, port = url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=60) as c:
        c.sendall(head + body)
        reply = b""
        while b"\r\n" not in reply:
            part = c.recv(4096)
            if not part:
                break
            reply += part
    return int(reply.split(b" ")[1]) if reply else 0


def hostile(exe):
    """Requests and options a careless or hostile user sends."""
    s = Server(exe, "--max-upload-mb", "1")
    try:
        base = s.url
        # A chunked body would bypass the upload limit: refused before it is read.
        chunk = b"x" * 65536
        body = b"".join(b"%x\r\n" % len(chunk) + chunk + b"\r\n" for _ in range(48)) + b"0\r\n\r\n"
        code = raw_request(base, b"POST /api/predict/upload HTTP/1.1\r\nHost: x\r\n"
                           b"Content-Type: multipart/form-data; boundary=b\r\n"
                           b"Transfer-Encoding: chunked\r\n\r\n", body)
        check("a chunked 3 MB upload with a 1 MB limit is refused (411)", code == 411, code)
        for path in ("/tests/test_api.py", "/node_modules/", "/package.json", "/.git/config",
                     "//tests/test_api.py", "/./tests/test_api.py", "/%2Ftests/test_api.py",
                     "/%74ests/test_api.py", "//package.json", "/x/../tests/test_api.py"):
            status, _, _ = call(base + path)
            check("%s is not served (404)" % path, status == 404, status)
        status, raw, _ = call(base + "/api/predict", b"1e999")
        check("a number beyond double (1e999) is 400, not 500", status == 400, (status, raw[:200]))
        status, raw, _ = call(base + "/api/predict", b'{"rate_mt_per_year": "\xff\xfe"}')
        check("invalid UTF-8 is 400, not 500", status == 400, (status, raw[:200]))
        status, raw, _ = call(base + "/api/predict", b'{"\xff": 1}')
        check("invalid UTF-8 in a key is 4xx, not 500", 400 <= status < 500, (status, raw[:200]))
        status, raw, _ = call(base + "/api/predict", b'{"rate_mt_per_year": [1, 2]}')
        check("a value of the wrong JSON type is 422, not 500", status == 422, (status, raw[:200]))
        case = open(os.path.join(ROOT, "examples", "opm", "s1_i000087", "case.h5"), "rb").read()
        for bad in (b"nan", b"-inf", b"-5", b"1e999", b"12abc"):
            body, ct = multipart({"case": ("c.h5", case), "critical_dp_bar": (None, bad)})
            status, raw, _ = call(base + "/api/predict/upload", body, ct)
            check("critical_dp_bar %s is 422" % bad.decode(), status == 422, (status, raw[:200]))
    finally:
        check("the server stops cleanly after hostile requests", s.stop() == 0)
    env = dict(os.environ, OMP_NUM_THREADS="1")

    def refused(args, what):
        # A private TMPDIR: other tests (the browser test) start servers beside this one, so
        # a before/after listing of /tmp would count their results directories as ours.
        with tempfile.TemporaryDirectory() as tmp:
            p = subprocess.run([exe, "--threads", "1"] + args, capture_output=True, text=True,
                               timeout=120, env=dict(env, TMPDIR=tmp))
            left = glob.glob(os.path.join(tmp, "ufno_server_*"))
        check("%s: exit 2, one line naming %s, nothing left in its TMPDIR"
              % (" ".join(args), what),
              p.returncode == 2 and what in p.stderr and p.stderr.count("\n") == 1 and not left,
              (p.returncode, p.stderr, left))
    refused(["--port", "70000"], "--port")
    refused(["--host", "no-such-host.invalid", "--port", "0"], "--host")
    refused(["--host", "192.0.2.1", "--port", "0"], "--host")  # TEST-NET: resolves, not ours
    refused(["--max-queue", "64"], "--max-queue")
    blocker = Server(exe)
    try:
        port = blocker.url.rsplit(":", 1)[1]
        refused(["--port", port], "--port")  # in use: the listen fails after the models load
    finally:
        blocker.stop()


def verify_with_flow(exe):
    """OPM Flow on the case of an earlier prediction: both sides' KPIs and their errors."""
    server = Server(exe)
    try:
        base = server.url
        status, r = post_json(base, {"rate_mt_per_year": 0.8})
        status, raw, _ = call(base + "/api/verify/" + r["id"], b"", method="POST")
        v = json.loads(raw)
        names = [k["kpi"] for k in v.get("kpis", [])]
        check("/api/verify/<id> runs Flow and returns every KPI of both sides", status == 200
              and "max_dP_bar" in names and "co2_mass_Mt" in names, (status, raw[:300]))
        inj = [k for k in v.get("kpis", []) if k["kpi"] == "injected_Mt"]
        check("both sides inject the same mass (the same case)", inj and
              inj[0]["abs_error"] <= 1e-4 * inj[0]["flow"], inj)
    finally:
        server.stop()


def main():
    exe = sys.argv[1]
    if sys.argv[2:] == ["--verify-with-flow"]:  # its own CTest test: a skip (77) without Flow
        if not shutil.which("flow"):
            print("SKIP: no OPM Flow (flow) on PATH")
            return 77
        verify_with_flow(exe)
    else:
        basic(exe)
        hostile(exe)
        batching(exe)
    print("%d passed, %d failed" % (sum(results), len(results) - sum(results)))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
