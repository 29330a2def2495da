"""What an output path may be (the twin of io/OutputPath.cpp): a new file, or an existing regular
file that is none of the task's inputs. Every task writes to a temporary name and renames it over
the output, which replaces whatever is there; so an output that is one of the inputs, under any
name (a hard or symbolic link, "./a/../a"), is refused before anything is read or written."""
import contextlib
import os


def identity(path):
    """(device, inode) of the file `path` names, through links; None when there is none."""
    try:
        s = os.stat(path)
    except (OSError, TypeError, ValueError):
        return None
    return (s.st_dev, s.st_ino)


def check_output(out, inputs, option="--out"):
    """Raises ValueError("OUT: OPTION: ...") when `out` is a symbolic link, a directory, not a
    regular file, or the same file as any of `inputs` (paths; None and "" are skipped)."""
    if not os.path.lexists(out):
        return
    if os.path.islink(out):
        raise ValueError("%s: %s: is a symbolic link; give the path of a new or regular file"
                         % (out, option))
    if os.path.isdir(out):
        raise ValueError("%s: %s: is a directory, not a file" % (out, option))
    if not os.path.isfile(out):
        raise ValueError("%s: %s: is not a regular file (a device, FIFO or socket): it is never "
                         "replaced" % (out, option))
    me = identity(out)
    for path in inputs:
        if path and identity(path) == me:
            raise ValueError("%s: %s: is the input file %s; it would be overwritten"
                             % (out, option, path))


def files_in(directory, suffix=".h5"):
    """The regular files of `directory` ending in `suffix` (a models directory's candidates)."""
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    return [os.path.join(directory, n) for n in names
            if n.endswith(suffix) and os.path.isfile(os.path.join(directory, n))]


@contextlib.contextmanager
def replace_when_done(out):
    """Yields a temporary path beside `out` to write; on leaving without an exception it is
    renamed over `out`, otherwise removed: a failure leaves no half-written output."""
    tmp = "%s.tmp%d" % (out, os.getpid())
    try:
        yield tmp
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
