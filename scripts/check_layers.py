#!/usr/bin/python3
"""The layering check: every #include of a project header in core/, fft/, decomposition/,
operators/, io/ (its ECLIPSE library included), runtime/ and screening/ must point down the
layers, core < fft < decomposition < operators and core < decomposition < io; operators and io
never include each other; runtime uses operators and io; screening uses runtime; apps/, tests/
and benchmarks/ may use every layer. Nothing below runtime/ reads the environment (getenv):
runtime/RunOptionsFromEnvironment.cpp, ThreadDefaults.cpp and DefaultModels.cpp build a program's
RunOptions (core/RunOptions.hpp), thread count and model directory from it, and screening/ gets
what it needs from them. Exits 1 listing each include against the layering that is not in
KNOWN (the ones left to move, each with its reason); exits 1 too when a KNOWN entry no longer
occurs, so the list only shrinks.

Usage: scripts/check_layers.py [ROOT]   (CTest: layering; CI runs it through the tests)
"""
import os
import re
import sys

ALLOWED = {
    "core": {"core"},
    "fft": {"core", "fft"},
    "decomposition": {"core", "fft", "decomposition"},
    "operators": {"core", "fft", "decomposition", "operators"},
    "io": {"core", "decomposition", "io"},
    "runtime": {"core", "fft", "decomposition", "operators", "io", "runtime"},
    "screening": {"core", "fft", "decomposition", "operators", "io", "runtime", "screening"},
}
# The layers that may read the environment (the programs' options come from there).
READS_ENVIRONMENT = {"runtime"}
# Project folders an include may name: a layer, or apps/ (which no layer may include).
PROJECT = set(ALLOWED) | {"apps"}
# (file, included header): includes against the layering that are still there, and why. Empty:
# a new entry needs a reason, and the list only shrinks.
KNOWN = {}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/([^"]+)"')
SOURCES = (".cpp", ".hpp", ".cu", ".cuh", ".h")
GETENV = re.compile(r'\b(std::)?(secure_)?getenv\s*\(')


def violations(root):
    found = set()
    for layer, allowed in ALLOWED.items():
        top = os.path.join(root, layer)
        for base, _, files in os.walk(top):
            for name in files:
                if not name.endswith(SOURCES):
                    continue
                path = os.path.join(base, name)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for line in f:
                        m = INCLUDE.match(line)
                        if m and m.group(1) in PROJECT and m.group(1) not in allowed:
                            found.add((rel, m.group(1) + "/" + m.group(2)))
                        if layer not in READS_ENVIRONMENT and GETENV.search(line.split("//")[0]):
                            found.add((rel, "getenv"))
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    found = violations(root)
    new = sorted(found - set(KNOWN))
    gone = sorted(set(KNOWN) - found)
    for f, inc in new:
        if inc == "getenv":
            print("check_layers: %s reads the environment, below runtime/ (use RunOptions)" % f)
        else:
            print("check_layers: %s includes %s, against the layering" % (f, inc))
    for f, inc in gone:
        print("check_layers: %s no longer includes %s: remove it from KNOWN" % (f, inc))
    print("check_layers: %d include(s) against the layering, %d of them known (%s)" % (
        len(found), len(found & set(KNOWN)), "; ".join(sorted(set(KNOWN.values())))))
    return 1 if new or gone else 0


if __name__ == "__main__":
    sys.exit(main())
