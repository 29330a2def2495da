"""python/tests/forked_run.py gives what subprocess.run gives: each case runs both ways (a fork of
this process and a new interpreter) and the results must be equal."""
import os
import subprocess
import sys

import pytest

import forked_run
from ufno.conversion import model_file  # a project module this process has loaded

TOOL = ("import os, sys\n"
        "mode = sys.argv[1]\n"
        "print('out', sys.argv[1:], os.getcwd() == os.environ.get('WANT_CWD'))\n"
        "print('err line', file=sys.stderr)\n"
        "if mode == 'exit3': sys.exit(3)\n"
        "if mode == 'message': sys.exit('tool: one line')\n"
        "if mode == 'raise': raise ValueError('boom')\n"
        "if mode == 'signal': os.kill(os.getpid(), 9)\n"
        "if mode == 'import': import ufno\n")
PY = sys.executable


def both(cmd, **kw):
    """Run cmd forked and fresh; the exit status, stdout and stderr must agree."""
    os.environ.pop("UFNO_TEST_FRESH_PYTHON", None)
    forked = forked_run.run(cmd, capture_output=True, text=True, **kw)
    fresh = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert (forked.returncode, forked.stdout, forked.stderr) == \
        (fresh.returncode, fresh.stdout, fresh.stderr)
    return forked


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "tool.py"
    path.write_text(TOOL)
    return str(path)


def test_exit_output_argv_cwd_environment(script, tmp_path):
    both([PY, script, "ok", "x y"], env=dict(os.environ, WANT_CWD=str(tmp_path)),
         cwd=str(tmp_path))


@pytest.mark.parametrize("mode", ["exit3", "message", "signal"])
def test_exit_status(script, mode):
    both([PY, script, mode])


def test_uncaught_exception_exits_1_with_the_traceback(script):
    r = both([PY, script, "raise"])
    assert "ValueError: boom" in r.stderr


def test_the_scripts_directory_is_on_sys_path_not_the_tests(script, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = both([PY, script, "import"], env=env)
    assert r.returncode == 1 and "ModuleNotFoundError" in r.stderr


def test_isolated_c_has_no_project_module():
    r = both([PY, "-I", "-c", "import sys; print(sys.argv); import ufno", "a"])
    assert r.returncode == 1 and "ModuleNotFoundError" in r.stderr


def test_m_runs_a_task_module_from_pythonpath():
    r = both([PY, "-m", "ufno.grow_modes", "--help"])
    assert r.returncode == 0 and r.stdout.startswith("usage: grow_modes.py")
    r = both([PY, "-m", "ufno.grow_modes", "--modes", "1"])
    assert r.returncode == 2


def test_a_project_module_is_imported_afresh():
    model_file.MARK = "changed by the test"
    probe = ("from ufno.conversion import model_file; "
             "print(getattr(model_file, 'MARK', 'fresh'))")
    assert both([PY, "-c", probe]).stdout.strip() == "fresh"


def test_a_timeout_raises_timeout_expired():
    with pytest.raises(subprocess.TimeoutExpired):
        forked_run.run([PY, "-c", "import time; time.sleep(30)"], timeout=0.5)


def test_a_python_command_line_runs_in_a_fork_unless_asked_otherwise(monkeypatch):
    # A mark set on sys here is seen by a fork only: which of the two ran.
    monkeypatch.setattr(sys, "ufno_forked_run_mark", True, raising=False)
    probe = [PY, "-c", "import sys; print(hasattr(sys, 'ufno_forked_run_mark'))"]
    assert forked_run.run(probe, capture_output=True, text=True).stdout.strip() == "True"
    monkeypatch.setenv("UFNO_TEST_FRESH_PYTHON", "1")
    assert forked_run.run(probe, capture_output=True, text=True).stdout.strip() == "False"
