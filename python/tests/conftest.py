"""What the Python tests share under pytest.

- The tasks run as `python3 -m ufno.TASK`: python/ goes on PYTHONPATH for the runs the tests
  start (forked by forked_run.run, or real interpreters).
- torch runs one thread here, so that forked_run can fork the test process (a fork does not carry
  an OpenMP pool over).
- A module with a global TMP gets a fresh temporary directory there for its tests.
- A file with a skipped test and no failed one exits 77 (CTest's SKIP_RETURN_CODE), not 0: a
  check that cannot run here shows as a skip in CTest too, never as a pass.
"""
import os
import shutil
import tempfile

import pytest
import torch

PYDIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIPPED_EXIT = 77

os.environ["PYTHONPATH"] = os.pathsep.join(
    [PYDIR] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
torch.set_num_threads(1)


@pytest.fixture(autouse=True, scope="module")
def _module_tmp(request):
    module = request.module
    if not hasattr(module, "TMP"):
        yield
        return
    module.TMP = tempfile.mkdtemp(prefix="ufno_%s_" % module.__name__)
    try:
        yield
    finally:
        shutil.rmtree(module.TMP, ignore_errors=True)


def pytest_sessionfinish(session, exitstatus):
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or exitstatus != 0:
        return
    if reporter.stats.get("skipped"):
        session.exitstatus = SKIPPED_EXIT
