"""`python3 -m ufno.nested_chain`: the nested chain in PyTorch (the twin of
`ufno_predict --case SITE.h5 --models DIR`, docs/nested-sites.md).

    PYTHONPATH=python /usr/bin/python3 -m ufno.nested_chain --case SITE.h5 --models DIR \\
        --out PRED.h5 [--threads N] [--float64]

Prints one line per level (its seconds) and the total. Refusals: one line
`nested_chain: <file>: <what>`, exit 2, no output file.
The code is python/ufno/models/nested_chain.py; this module is the task's command line."""
import argparse
import os
import sys
import time

import torch


def main(argv=None):
    p = argparse.ArgumentParser(prog="nested_chain",
                                description="Predict a 3-D site with the nested chain (GLOBAL dP,"
                                            " then LGR1..LGR4 dP and SG per well) in PyTorch.")
    p.add_argument("--case", required=True, metavar="SITE.h5", help="site file (ufno_import)")
    p.add_argument("--models", required=True, metavar="DIR",
                   help="directory of the nine FNO4D model files (ufno.convert --level)")
    p.add_argument("--out", required=True, metavar="PRED.h5", help="prediction file")
    p.add_argument("--threads", type=int, default=None,
                   help="torch threads (default: PyTorch's own)")
    p.add_argument("--float64", action="store_true",
                   help="compute in float64 from the float32 weights and inputs (golden outputs)")
    args = p.parse_args(argv)
    if args.threads is not None:
        if args.threads < 1:
            print("nested_chain: --threads %d must be at least 1" % args.threads,
                  file=sys.stderr)
            return 2
        torch.set_num_threads(args.threads)
    from ufno.models import nested_chain as chain

    def log(level, var, seconds):
        print("nested_chain: %-12s %s %8.3f s" % (level.path, var, seconds), flush=True)

    from ufno.data.output_path import check_output, files_in
    try:
        check_output(args.out, [args.case] + files_in(args.models))
    except ValueError as e:
        print("nested_chain: %s" % e, file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    try:
        chain.predict_site(args.case, args.models, args.out,
                           torch.float64 if args.float64 else torch.float32, log)
    except chain.ChainError as e:
        print(e.line(), file=sys.stderr)
        return 2
    print("nested_chain: wrote %s in %.3f s (%d threads, %s)"
          % (args.out, time.perf_counter() - t0, torch.get_num_threads(),
             "float64" if args.float64 else "float32"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
