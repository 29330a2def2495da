"""benchmarks/torch_blas.py: the benchmarks' PyTorch baseline refuses a BLAS it does not know as
optimised (ATLAS, the reference BLAS), naming it, unless UFNO_BENCH_ANY_BLAS=1."""
import importlib.util
import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "torch_blas", os.path.join(HERE, "..", "..", "benchmarks", "torch_blas.py"))
torch_blas = importlib.util.module_from_spec(spec)
spec.loader.exec_module(torch_blas)


def test_refuses_atlas_and_reference_blas(monkeypatch, capsys):
    for lib in ("/usr/lib/x86_64-linux-gnu/atlas/libblas.so.3",
                "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3"):
        monkeypatch.setattr(torch_blas, "loaded_blas", lambda lib=lib: [lib])
        monkeypatch.delenv("UFNO_BENCH_ANY_BLAS", raising=False)
        with pytest.raises(SystemExit) as e:
            torch_blas.require_optimised_blas("bench")
        assert lib in str(e.value) and "libopenblas0-pthread" in str(e.value)
        monkeypatch.setenv("UFNO_BENCH_ANY_BLAS", "1")
        assert torch_blas.require_optimised_blas("bench") == [lib]
        assert "not an optimised BLAS" in capsys.readouterr().err


def test_accepts_openblas_and_finds_the_loaded_library(monkeypatch):
    lib = "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3"
    monkeypatch.setattr(torch_blas, "loaded_blas", lambda: [lib])
    assert torch_blas.require_optimised_blas("bench") == [lib]
    monkeypatch.undo()
    assert all(p.startswith("/") for p in torch_blas.loaded_blas())  # this process's, read back
