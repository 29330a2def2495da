"""examples/make_example_case.py: the shipped example case is what its default seed writes (byte for
byte), and another seed, whose draws put cells at 1 mD (which the encoding could not tell from an
inactive cell), writes a case that passes the writer's own checks."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(ROOT, "examples", "make_example_case.py")


def make(tmp_path, *args):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True,
                          env=env, cwd=tmp_path)


def test_default_seed_writes_the_shipped_example(tmp_path):
    out = tmp_path / "case.h5"
    p = make(tmp_path, "--out", str(out))
    assert p.returncode == 0, p.stderr
    with open(out, "rb") as a, open(os.path.join(ROOT, "examples", "example_case.h5"), "rb") as b:
        assert a.read() == b.read()


def test_seed_seven_passes_the_checks(tmp_path):
    p = make(tmp_path, "--seed", "7", "--out", str(tmp_path / "other.h5"))
    assert p.returncode == 0, p.stderr
