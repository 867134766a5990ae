#!/usr/bin/env python3
"""pbrain-pygomoku: the Gomocup (Piskvork protocol) brain.

Run it as ``python /path/to/engine.py`` from any working directory, or as the ``pbrain-pygomoku`` console
command (``engine:main``), or frozen by PyInstaller. Managers talk to it on stdin/stdout; see
``docs/PROTOCOL.md`` and :mod:`protocol.brain`.

Options (managers pass none):

``--log FILE``     log to FILE (also ``PYGOMOKU_LOG=FILE``; ``PYGOMOKU_LOG=folder`` logs under ``INFO folder``).
``--model M``      play every game with the network M: a path (basename, ``.json`` file or model folder), the
                   name of a shipped model (``gomoku8-4x32``) or ``heuristic``. Without it the network is
                   chosen per game from ``models/index.json`` by rule and board size (``START 8`` gets the
                   8x8 network; see :func:`gomoku_ai.shipped.default_model`). A model that names nothing
                   is reported on stderr and the engine exits with status 2 before reading any command.
``--list-models``  print the shipped models (name, board sizes, notes) and exit (not for managers).
``--version``      print the version and exit (not for managers).
``--help``, ``-h``     print these options and exit (not for managers).
``--eval-worker ...``  run as the network worker of another engine process (``INFO thread_num 2``;
                   :mod:`gomoku_ai.net.evalworker`), not for managers or users.

Environment: ``PYGOMOKU_PLAYER=sleepy|stuck`` selects a diagnostic player for tests (see
:mod:`gomoku_ai.testplayers`). ``PYGOMOKU_MCTS="c_puct=1.2,fpu_reduction=0.3"`` overrides search parameters
(:class:`gomoku_ai.mcts.MCTSConfig` fields, for A/B matches); one that names no field or has a bad value is reported
on stderr and the engine exits with status 2 before reading any command. ``PYGOMOKU_NET_BACKEND=onnx`` runs the
network's float graph where it also has an int8 one (``onnx-int8``, the default when present; ``numpy``); an
unknown value is refused the same way. ``PYGOMOKU_WORKER=0`` keeps the search in one process under ``INFO thread_num 2``
(which otherwise evaluates the network in a second process where ``INFO max_memory`` leaves room for it).
``PYGOMOKU_NATIVE=0`` runs the tactics in pure Python where the C core (:mod:`gomoku_ai.native`) is built, ``PYGOMOKU_VCT_NATIVE=0`` only the VCT search. ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS`` and ``MKL_NUM_THREADS`` default to
1 (set here, before numpy is imported) so that BLAS does not start a thread per core.

Start-up is kept short (GomocupJudge charges it to the first move): only the standard library and the
protocol modules are imported before the first command (and, when ``PYGOMOKU_MCTS`` or ``PYGOMOKU_NET_BACKEND``
is set, the modules that check them); numpy comes with the board module, and the player
(and any model) is created while START is handled.
"""
from __future__ import annotations

import os
import sys
import time

_T0 = time.perf_counter()

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
             "NUMEXPR_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


def base_dir() -> str:
    """Where the engine's files (``models/`` etc.) are: PyInstaller's unpack folder (``sys._MEIPASS``) when
    frozen in one file, the executable's folder when frozen in one folder, else this file's folder."""
    meipass = getattr(sys, "_MEIPASS", None)
    if meipass:
        return str(meipass)
    if getattr(sys, "frozen", False):
        return os.path.dirname(os.path.abspath(sys.executable))
    return os.path.dirname(os.path.abspath(__file__))


def models_dir() -> str:
    """The folder holding the shipped networks (``<base_dir>/models``)."""
    return os.path.join(base_dir(), "models")


_BASE = base_dir()
if _BASE not in sys.path:
    sys.path.insert(0, _BASE)
os.environ.setdefault("PYGOMOKU_HOME", _BASE)


def _parse_args(argv: list) -> dict:
    opts: dict = {"log": None, "version": False, "model": None, "list_models": False,
                  "help": False}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--log", "--model") and i + 1 < len(argv):
            opts[a[2:]] = argv[i + 1]
            i += 1
        elif a.startswith(("--log=", "--model=")):
            key, value = a[2:].split("=", 1)
            opts[key] = value
        elif a == "--version":
            opts["version"] = True
        elif a == "--list-models":
            opts["list_models"] = True
        elif a in ("--help", "-h"):
            opts["help"] = True
        i += 1  # anything else is ignored: a brain must not fail on unexpected arguments
    return opts


THREAD_STACK_BYTES = 4 * 1024 * 1024
#: the player's A/B switches (gomoku_ai.player.check_switches: VALUED and FLAGS), checked at start when
#: one is set (the player module is imported only then)
SWITCHES = ("PYGOMOKU_MCTS", "PYGOMOKU_THREAT", "PYGOMOKU_CHECK", "PYGOMOKU_ATTACK", "PYGOMOKU_ATTACK_QUIET",
            "PYGOMOKU_DEFENCE_PRIOR", "PYGOMOKU_CHECK_TIME",
            "PYGOMOKU_DEFENCE_LEVELS", "PYGOMOKU_VCT", "PYGOMOKU_VCT_FILTER",
            "PYGOMOKU_VCT_REPLAY", "PYGOMOKU_VCT_HINTS", "PYGOMOKU_RESTRICT_REUSE", "PYGOMOKU_THREE_REPLIES",
            "PYGOMOKU_TIME_MANAGE", "PYGOMOKU_WORKER", "PYGOMOKU_NATIVE", "PYGOMOKU_VCT_NATIVE",
            "PYGOMOKU_CHECK_RESUME", "PYGOMOKU_DEFENCE_DROP", "PYGOMOKU_QUIET",
            "PYGOMOKU_VCT_PN")


def limit_virtual_memory() -> None:
    """Keep the address space small: GomocupJudge measures *virtual* memory (350 MB limit).

    glibc gives every thread that allocates its own 64 MB malloc arena (address space, not RAM), and
    every thread an 8 MB stack reservation; with the reader, worker and watchdog threads that alone
    was ~220 MB of VmPeak here. One arena for the process and 4 MB stacks bring an idle brain from
    ~320 MB to ~135 MB of VmPeak (measured with benchmarks/bench_brain.py).
    """
    import threading
    threading.stack_size(THREAD_STACK_BYTES)
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            M_ARENA_MAX = -8
            ctypes.CDLL(None).mallopt(M_ARENA_MAX, 1)
        except (OSError, AttributeError):
            pass


def main(argv: "list | None" = None) -> int:
    """Entry point: run the brain on stdin/stdout (never returns when the brain runs)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--eval-worker"]:   # a frozen engine's network worker (gomoku_ai.net.evalworker)
        from gomoku_ai.net.evalworker import main as worker_main
        return worker_main(args[1:])
    opts = _parse_args(args)
    limit_virtual_memory()
    if opts["help"]:
        import re
        doc = __doc__ or ""
        print("usage: engine.py [--model M] [--log FILE] [--list-models] [--version] [--help]\n\n"
              + re.sub(r":\w+:`([^`]+)`", r"\1",
                       doc[doc.index("Options"):doc.index("Environment")]).replace("``", "").rstrip())
        return 0
    if opts["version"]:
        from gomoku_ai import version_string
        print(version_string())
        return 0
    if opts["list_models"]:
        from gomoku_ai.shipped import format_models
        print(format_models())
        return 0
    if opts["model"] is not None:  # a typo must not become a silent fallback: say so before any command
        from gomoku_ai.shipped import ModelNotFoundError, model_choice
        try:
            model_choice(opts["model"])
        except ModelNotFoundError as e:
            print(f"pbrain-pygomoku: --model: {e}", file=sys.stderr)
            return 2
    if os.environ.get("PYGOMOKU_NET_BACKEND", "").strip():   # refuse a typo before any command
        from gomoku_ai.shipped import env_backend
        try:
            env_backend()
        except ValueError as e:
            print(f"pbrain-pygomoku: {e}", file=sys.stderr)
            return 2
    if any(os.environ.get(v, "").strip() for v in SWITCHES):   # refuse a typo before any command
        from gomoku_ai.checks import ConfigError
        from gomoku_ai.player import check_switches
        try:
            check_switches()
        except ConfigError as e:
            print(f"pbrain-pygomoku: {e}", file=sys.stderr)
            return 2
    from gomoku_ai.timeman import monotonic_ms, process_age_ms
    age = process_age_ms()
    now = monotonic_ms()
    if age is None:  # no OS support: time since this module started, plus a typical interpreter start
        age = now - _T0 * 1000.0 + 50.0
    from protocol.stdio import run_stdio
    return run_stdio(log_path=opts["log"], process_start_ms=now - age, model=opts["model"])


if __name__ == "__main__":
    sys.exit(main())
