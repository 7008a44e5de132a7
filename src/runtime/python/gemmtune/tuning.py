"""Tuning from Python: `gemmtune sweep --from-misses` on the problems this program's runtimes recorded.

A cache entry is keyed by the GPU and the cuBLASLt version that measured it (Runtime.device_key). A Python program
runs the cuBLASLt that was loaded first: a framework's own copy (PyTorch's wheels bring one) where it was imported
before gemmtune. sweep_misses() runs the CLI with that same library preloaded, so that what it tunes is found by
this program's next Runtime.
"""
import os
import shutil
import subprocess

from ._gemmtune import CheckError, Error, InputError, NoGpuError

# The CLI's exit codes (DESIGN.md) as the exceptions a Python caller catches.
_EXIT_ERRORS = {1: CheckError, 2: InputError, 3: NoGpuError}


def loaded_cublaslt():
    """The path of the libcublasLt this process runs, or None (read from /proc/self/maps: Linux only)."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split(None, 5)  # address perms offset dev inode [path]
                if len(fields) == 6 and os.path.basename(fields[5].strip()).startswith("libcublasLt.so"):
                    return fields[5].strip()
    except OSError:
        return None
    return None


def find_cli(cli=None):
    """The gemmtune executable: `cli`, else $GEMMTUNE_CLI, else the build tree's (this package in build/python/),
    else `gemmtune` on PATH."""
    if cli is None:
        cli = os.environ.get("GEMMTUNE_CLI")
    if cli is None:
        beside_build = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir,
                                                     "gemmtune"))
        cli = beside_build if os.access(beside_build, os.X_OK) else shutil.which("gemmtune")
    if cli is None or not os.access(cli, os.X_OK):
        raise InputError("cli: the gemmtune executable was not found (pass cli=, set GEMMTUNE_CLI, or put gemmtune "
                         "on PATH)")
    return cli


def sweep_misses(db=None, *, fp32_equivalent=False, device=0, profile=None, cli=None, args=(), capture_output=False,
                 check=True):
    """Runs `gemmtune sweep --from-misses --db DB` (with --fp32-equivalent, --profile, and `args` where given) with
    this process's cuBLASLt, and returns its subprocess.CompletedProcess. db None: no --db, so the CLI sweeps the
    default db (gemmtune.default_db(): the CLI reads the same environment), where a Runtime given no db records its
    misses. With check, a failure raises by the CLI's exit code: gemmtune.CheckError (1: a candidate failed
    verification; the verified ones were still cached), InputError (2), NoGpuError (3). Flush the Runtime
    (Runtime.flush) first: the sweep reads the misses from the db."""
    command = [find_cli(cli), "sweep", "--from-misses"]
    if db is not None:
        command += ["--db", os.fspath(db)]
    command += ["--device", str(device)]
    if fp32_equivalent:
        command.append("--fp32-equivalent")
    if profile is not None:
        command += ["--profile", profile]
    command += list(args)
    env = dict(os.environ)
    lt = loaded_cublaslt()
    if lt is not None:
        env["LD_PRELOAD"] = lt + (" " + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    done = subprocess.run(command, env=env, capture_output=capture_output, text=True)
    if check and done.returncode != 0:
        detail = (done.stderr or "").strip().splitlines()[-1:] if capture_output else []
        message = f"{' '.join(command)} exited with {done.returncode}" + (f": {detail[0]}" if detail else "")
        raise _EXIT_ERRORS.get(done.returncode, Error)(message)
    return done
