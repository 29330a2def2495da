"""`run`: subprocess.run for the Python command lines of the tests, in a fork of the test process.

Why: the tests start the project's scripts (converter, training, heads) dozens of times, and each
new interpreter spends about two seconds of CPU importing torch: most of what several suites cost
in CI, which has a time budget. A fork of the test process, which has torch, numpy and h5py
loaded already, starts in milliseconds; everything a test checks of a run stays separate: its own
process, exit status, stdout and stderr (file descriptors 1 and 2), environment and working
directory, a fresh sys.path and fresh copies of the project's own modules (nothing a test
changed in them leaks into the run), and an uncaught exception prints its traceback and exits 1
as the interpreter does.

Only `[python, [-I], SCRIPT.py | -c CODE | -m MODULE, ARGS...]` is forked (PYTHONPATH counts as
for a new interpreter, unless -I); anything else (another program,
stdin input) runs as a real subprocess. UFNO_TEST_FRESH_PYTHON=1 runs everything as a real
subprocess, to check that the tests pass the same way.
"""
import faulthandler
import json
import os
import runpy
import subprocess
import sys
import tempfile
import time
import traceback

PROJECT_PYTHON = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_THIS_FILE = __file__
PYTHONS = {sys.executable, "/usr/bin/python3"}
_base_path = None


def fresh_python():
    """Whether to start a new interpreter: when asked to, or when torch runs more than one thread
    here (a fork does not carry an OpenMP thread pool over: the run could hang)."""
    torch = sys.modules.get("torch")
    many_threads = torch is not None and torch.get_num_threads() > 1
    return os.environ.get("UFNO_TEST_FRESH_PYTHON") == "1" or many_threads


def _parse(cmd):
    """(isolated, code, script, args) of [python, [-I], (-c CODE | -m MODULE | SCRIPT.py), ARGS...]
    (script "-m MODULE" for a module), or None."""
    if len(cmd) < 2 or cmd[0] not in PYTHONS:
        return None
    i, isolated = 1, False
    if cmd[i] == "-I":
        isolated, i = True, i + 1
    if i + 1 < len(cmd) and cmd[i] == "-c":
        return isolated, cmd[i + 1], None, cmd[i + 2:]
    if i + 1 < len(cmd) and cmd[i] == "-m":
        return isolated, None, "-m " + cmd[i + 1], cmd[i + 2:]
    if i < len(cmd) and cmd[i].endswith(".py") and not cmd[i].startswith("-"):
        return isolated, None, cmd[i], cmd[i + 1:]
    return None


def _interpreter_path():
    """sys.path of `python3 -I` (the standard library and site packages): what a new interpreter
    starts from before the script's own directory is added."""
    global _base_path
    if _base_path is None:
        probe = "import json, sys; print(json.dumps(sys.path))"
        out = subprocess.run([sys.executable, "-I", "-c", probe], capture_output=True, text=True,
                             check=True).stdout
        _base_path = json.loads(out)
    return list(_base_path)


def _forget_project_modules():
    """Drop the project's modules (those under python/) so that the run imports its own copies."""
    for name, module in list(sys.modules.items()):
        f = getattr(module, "__file__", None) or ""
        if os.path.abspath(f).startswith(PROJECT_PYTHON + os.sep):
            del sys.modules[name]


def _exit_status(code):
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _child(parsed, env, cwd):
    isolated, code, script, args = parsed
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    if cwd is not None:
        os.chdir(cwd)
    path = _interpreter_path()
    if not isolated:
        path = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p] + path
    _forget_project_modules()
    try:
        if code is not None:
            sys.argv = ["-c"] + list(args)
            sys.path = path if isolated else [""] + path
            exec(compile(code, "<string>", "exec"), {"__name__": "__main__"})
        elif script.startswith("-m "):
            sys.argv = ["-m"] + list(args)  # runpy puts the module's file name first
            sys.path = path if isolated else [os.getcwd()] + path
            runpy.run_module(script[3:], run_name="__main__", alter_sys=True)
        else:
            sys.argv = [script] + list(args)
            sys.path = path if isolated else [os.path.dirname(os.path.abspath(script))] + path
            runpy.run_path(script, run_name="__main__")
        return 0
    except SystemExit as e:
        return _exit_status(e.code)
    except BaseException as e:
        _print_traceback(e)
        return 1


def _print_traceback(e):
    """The interpreter's report of an uncaught exception: the frames of this module and of
    runpy, which a new interpreter would not have, left out."""
    tb = e.__traceback__
    while tb is not None and (tb.tb_frame.f_code.co_filename == _THIS_FILE or
                              tb.tb_frame.f_code.co_filename.startswith("<frozen runpy")):
        tb = tb.tb_next
    traceback.print_exception(type(e), e, tb)


def _read(f, text):
    f.seek(0)
    data = f.read()
    return data.decode("utf-8", "replace") if text else data


def run(cmd, capture_output=False, text=False, env=None, cwd=None, timeout=None, input=None,
        check=False):
    """subprocess.run(cmd, ...) with the same result; a Python command line runs in a fork."""
    parsed = None if fresh_python() or input is not None else _parse(list(cmd))
    if parsed is None:
        return subprocess.run(cmd, capture_output=capture_output, text=text, env=env, cwd=cwd,
                              timeout=timeout, input=input, check=check)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child never returns: os._exit skips the test's own clean-up
            status = 1
            try:
                # Python's own streams on file descriptors 0, 1 and 2, as in a new interpreter (a
                # test runner may have replaced them with its captures).
                sys.stdin, sys.stdout, sys.stderr = sys.__stdin__, sys.__stdout__, sys.__stderr__
                faulthandler.disable()  # off in a new interpreter; pytest turns it on
                if capture_output:
                    os.dup2(out.fileno(), 1)
                    os.dup2(err.fileno(), 2)
                status = _child(parsed, env, cwd)
            finally:
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(status)
        status = _wait(pid, cmd, timeout)
        stdout = _read(out, text) if capture_output else None
        stderr = _read(err, text) if capture_output else None
    result = subprocess.CompletedProcess(cmd, status, stdout, stderr)
    if check:
        result.check_returncode()
    return result


def _wait(pid, cmd, timeout):
    deadline = None if timeout is None else time.monotonic() + timeout
    delay = 0.001
    while True:
        done, status = os.waitpid(pid, 0 if deadline is None else os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            raise subprocess.TimeoutExpired(cmd, timeout)
        time.sleep(delay)
        delay = min(delay * 2, 0.05)
