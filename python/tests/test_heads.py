"""What every KPI-head trainer shares (ufno.heads.common.head_args), for each head kind: the
help, and refusals of bad settings before any data is read (one line "TOOL: ...", exit
non-zero, no output file). Each kind's own behaviour is in its test_<kind>_head.py."""

import pytest

from cli_checks import CliChecks
from heads_support import DP_MODEL, HEADS, SG_MODEL

REFUSALS = [  # what, the arguments, what the line says
    ("--members 0", ["--members", "0"], "--members"),
    ("--members 65", ["--members", "65"], "--members"),
    ("--hidden 0", ["--hidden", "0"], "--hidden"),
    ("--hidden 2000", ["--hidden", "2000"], "--hidden"),
    ("--epochs beyond the limit", ["--epochs", "1000000000"], "--epochs"),
    ("--weight-decay nan", ["--weight-decay", "nan"], "--weight-decay"),
    ("--weight-decay inf", ["--weight-decay", "inf"], "--weight-decay"),
    ("--weight-decay -1", ["--weight-decay", "-1"], "--weight-decay"),
    ("--limit -1", ["--limit", "-1"], "--limit"),
]


def cli(kind):
    module = HEADS[kind][0]
    return CliChecks(module)


@pytest.mark.parametrize("kind", sorted(HEADS))
def test_help(kind):
    p = cli(kind).run(["--help"])
    assert p.returncode == 0 and "--data" in p.stdout and "--model" in p.stdout, p.stderr


@pytest.mark.parametrize("what,args,say", REFUSALS, ids=[r[0] for r in REFUSALS])
@pytest.mark.parametrize("kind", sorted(HEADS))
def test_refused_settings(kind, what, args, say, tmp_path):
    _, variable, needs = HEADS[kind]
    model = DP_MODEL if variable == "dP" else SG_MODEL
    out = str(tmp_path / "out.h5")
    base = ["--data", str(tmp_path / "data.h5"), "--model", model, "--out", out]
    cli(kind).refused(what, base + [str(tmp_path / a) if a.endswith(".csv") else a
                                    for a in needs] + args, out, say)
