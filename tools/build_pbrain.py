"""``gomoku build-pbrain``: freeze ``engine.py`` into a Gomocup brain executable with PyInstaller.

Usage (``python -m tools.build_pbrain`` works the same)::

    gomoku build-pbrain                          # dist/pbrain-pygomoku/pbrain-pygomoku[.exe] (one folder)
    gomoku build-pbrain --onefile                # dist/pbrain-pygomoku[.exe] (one file)
    gomoku build-pbrain --model runs/x/best      # ship this model (and nothing else from models/)
    gomoku build-pbrain --no-model --zip         # heuristic evaluator only; also write the submission ZIP
    gomoku build-pbrain --dry-run                # print the PyInstaller command line, build nothing

Needs PyInstaller (``pip install -e .[build]``); PyInstaller does not cross-compile, so a Windows
``pbrain-<name>.exe`` is built on Windows (docs/BUILDING.md). The last line printed is a JSON object with the
executable's path and the bundle's size.

What goes in (PROTOCOL.md section 3):

* ``engine.py`` as the entry point, named ``pbrain-<name>`` (Piskvork picks the protocol from that prefix).
* One-folder layout by default: PyInstaller 6 puts the exe in ``<out>/pbrain-<name>/`` with everything else in
  ``_internal/``, and (on Windows) runs as one process. One file (``--onefile``) runs as two processes (a
  bootloader parent and the Python child, whose memory GomocupJudge adds up) and unpacks itself into a temporary
  ``_MEIxxxxxx`` folder at every start, which GomocupJudge charges to the first move.
* Models as data under ``models/`` of the bundle (``sys._MEIPASS/models``: ``_internal/models`` in one folder,
  the unpack folder in one file), where ``engine.py`` (``PYGOMOKU_HOME``) and
  :func:`gomoku_ai.shipped.models_dir` look. By default the ``models/`` folder of the checkout: its
  ``index.json`` and the files of the models it names; with ``--model PATH`` that one model and a generated
  ``index.json`` naming it for every rule; with ``--no-model`` (or no ``models/index.json``) none, and the brain
  plays with the hand-written evaluator.
* Every module of the runtime packages (``gomoku_ai`` less ``gomoku_ai.training``, and ``protocol``) as a
  hidden import, since several are imported inside functions; numpy and onnxruntime (unless
  ``--no-onnxruntime``, which leaves the numpy backend and ships no ``.onnx`` files). Training, plotting, GUI
  and test libraries (torch, onnx, tkinter, matplotlib, ...) and the ``tools`` package are excluded explicitly.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Dict, List, Optional, Sequence, Tuple

from protocol.lines import DEFAULT_MAX_MEMORY

ROOT = Path(__file__).resolve().parents[1]
ENTRY = ROOT / "engine.py"
MODEL_SUFFIXES = (".json", ".npz", ".onnx", ".int8.onnx")   # .int8.onnx: the int8 graph, when quantised
NAME_RE = re.compile(r"[A-Za-z0-9_.\-]+")  # PROTOCOL.md section 3: the characters Piskvork allows

#: packages whose every module is bundled (hidden imports), less :data:`OWN_EXCLUDES`
RUNTIME_PACKAGES = ("gomoku_ai", "protocol")
#: our own modules the brain never imports (training needs torch; tools are the developer CLI)
OWN_EXCLUDES = ("gomoku_ai.training", "tools")
#: third-party modules kept out of the bundle even if something mentions them
EXCLUDES = (
    "torch", "torchvision", "torchaudio", "functorch", "triton",
    "onnx", "onnxscript", "onnxconverter_common", "google.protobuf",
    "onnxruntime.transformers", "onnxruntime.quantization", "onnxruntime.tools", "onnxruntime.training",
    "onnxruntime.backend", "onnxruntime.datasets",
    "tkinter", "_tkinter", "turtle", "idlelib",
    "matplotlib", "PIL", "scipy", "pandas", "sympy", "mpmath", "networkx", "jinja2", "fsspec", "filelock",
    "ml_dtypes", "IPython", "notebook", "jupyter_client",
    "pytest", "_pytest", "hypothesis", "pydoc_data", "lib2to3",
    "setuptools", "pkg_resources", "distutils", "numpy.distutils", "numpy.f2py", "numpy.testing",
    "unittest", "doctest", "pdb", "pydoc", "xmlrpc", "http.server", "webbrowser", "ssl", "_ssl",
    "rich", "prompt_toolkit", "pygments", "wcwidth",
)


class BuildError(RuntimeError):
    """A build that cannot be made as asked (bad name, missing model, no PyInstaller, PyInstaller failed)."""


@dataclass
class BuildSpec:
    """What to build; :func:`pyinstaller_args` turns it into PyInstaller's command line."""
    name: str = "pygomoku"
    onefile: bool = False
    out: Path = ROOT / "dist"
    work: Path = ROOT / "build" / "pbrain"
    datas: List[Tuple[Path, str]] = field(default_factory=list)  # (source file, folder inside the bundle)
    models: List[str] = field(default_factory=list)              # model basenames shipped
    model_note: str = ""
    onnxruntime: bool = True
    platform: str = sys.platform

    @property
    def exe_stem(self) -> str:
        return f"pbrain-{self.name}"

    @property
    def exe_name(self) -> str:
        return self.exe_stem + (".exe" if self.platform == "win32" else "")

    @property
    def bundle_path(self) -> Path:
        """The exe (one file) or the folder that holds it (one folder): what gets zipped and measured."""
        return self.out / (self.exe_name if self.onefile else self.exe_stem)

    @property
    def exe_path(self) -> Path:
        return self.bundle_path if self.onefile else self.bundle_path / self.exe_name


def check_name(name: str) -> str:
    """The brain name without a ``pbrain-`` prefix or ``.exe`` suffix; only ``A-Z a-z 0-9 - _ .``."""
    n = name.strip()
    if n.lower().endswith(".exe"):
        n = n[:-4]
    if n.lower().startswith("pbrain-"):
        n = n[7:]
    if not n or not NAME_RE.fullmatch(n):
        raise BuildError(f"bad brain name {name!r}: use only A-Z a-z 0-9 - _ .")
    return n


def runtime_modules(root: Path = ROOT) -> List[str]:
    """Every module of :data:`RUNTIME_PACKAGES` found in the source tree (not imported), less
    :data:`OWN_EXCLUDES`, sorted: the hidden imports. Compiled extension modules that are built
    (the optional C core, ``gomoku_ai._native``) are among them."""
    import importlib.machinery
    mods = []
    suffixes = [".py"] + list(importlib.machinery.EXTENSION_SUFFIXES)
    for pkg in RUNTIME_PACKAGES:
        base = root / pkg
        for path in sorted(p for p in base.rglob("*") if p.is_file()):
            suffix = next((x for x in suffixes if path.name.endswith(x)), None)
            if suffix is None:
                continue
            rel = path.relative_to(root)
            rel = rel.with_name(rel.name[:-len(suffix)])
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts.pop()
            if any(not re.fullmatch(r"[A-Za-z_]\w*", p) for p in parts):
                continue
            mod = ".".join(parts)
            if any(mod == x or mod.startswith(x + ".") for x in OWN_EXCLUDES):
                continue
            mods.append(mod)
    return sorted(set(mods))


def _model_files(base: Path, onnx: bool) -> List[Path]:
    """The files of the model ``base`` (a basename) to ship: its .json and whichever of .npz/.onnx exist, and its
    .int8.onnx when the json records it (no graph without onnxruntime)."""
    files = [base.with_name(base.name + s) for s in MODEL_SUFFIXES if onnx or not s.endswith(".onnx")]
    files = [f for f in files if f.is_file() and (not f.name.endswith(".int8.onnx") or _records_int8(base))]
    if not files or files[0].suffix != ".json":
        raise BuildError(f"model {base}: no {base.name}.json")
    if len(files) < 2:
        raise BuildError(f"model {base}: no weights ({base.name}.npz{' or .onnx' if onnx else ''})")
    return files


def _records_int8(base: Path) -> bool:
    """True when the model's json records its int8 graph (a stale ``.int8.onnx`` beside a re-exported model
    is not shipped: the engine would not play it)."""
    try:
        cfg = json.loads(base.with_name(base.name + ".json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(cfg, dict) and isinstance(cfg.get("sha256"), dict) and bool(cfg["sha256"].get("onnx_int8"))


def _basename(path: Path) -> Path:
    """The basename of a model named by a basename, one of its files, or its own folder (as
    :func:`gomoku_ai.net.model.model_basename`, without importing numpy)."""
    if path.name.endswith(".int8.onnx") and path.is_file():
        return path.with_name(path.name[:-len(".int8.onnx")])
    if path.suffix in MODEL_SUFFIXES and path.is_file():
        return path.with_suffix("")
    if path.is_dir():
        own = path / (path.name + ".json")
        jsons = sorted(path.glob("*.json"))
        if own.is_file():
            return own.with_suffix("")
        if len(jsons) == 1:
            return jsons[0].with_suffix("")
        raise BuildError(f"{path}: a folder that is neither a models folder (index.json) nor one model")
    return path


def select_models(model: Optional[str] = None, no_model: bool = False, models_root: Path = ROOT / "models",
                  stage: Path = ROOT / "build" / "pbrain" / "models", onnx: bool = True
                  ) -> Tuple[List[Tuple[Path, str]], List[str], str]:
    """The model data to bundle: ``(datas, model basenames, note)``; each data entry is (file, "models").

    ``no_model``: nothing. ``model`` None: ``models_root/index.json`` and the models it names (nothing, with
    a note, when there is no index). ``model`` a models folder (holding index.json): the same for that folder.
    ``model`` one model: its files and an ``index.json`` written to ``stage`` that names it for freestyle (the
    fallback for every rule, :func:`gomoku_ai.shipped.default_model`)."""
    if no_model:
        return [], [], "no model (--no-model): the brain uses the hand-written evaluator"
    folder = models_root if model is None else Path(model)
    if model is None or (folder.is_dir() and (folder / "index.json").is_file()):
        index_path = folder / "index.json"
        if not index_path.is_file():
            return [], [], f"no model: {index_path} does not exist; the brain uses the hand-written evaluator"
        try:
            index = json.loads(index_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise BuildError(f"{index_path}: not readable JSON ({e})") from None
        if not isinstance(index, dict) or not index:
            raise BuildError(f"{index_path}: expected an object mapping rule names to model basenames")
        names = sorted({str(v) for v in index.values() if v})
        datas: List[Tuple[Path, str]] = [(index_path, "models")]
        for n in names:
            if "/" in n or "\\" in n:
                raise BuildError(f"{index_path}: model {n!r} must be a basename in the same folder")
            datas += [(f, "models") for f in _model_files(folder / n, onnx)]
        return datas, names, f"models from {folder}: " + ", ".join(names)
    base = _basename(Path(model))
    files = _model_files(base, onnx)
    stage.mkdir(parents=True, exist_ok=True)
    index_path = stage / "index.json"
    index_path.write_text(json.dumps({"freestyle": base.name}, indent=2) + "\n", encoding="utf-8")
    return ([(index_path, "models")] + [(f, "models") for f in files], [base.name],
            f"model {base} (generated index.json: freestyle -> {base.name}, the fallback for every rule)")


def make_spec(name: str = "pygomoku", onefile: bool = False, out: Optional[str] = None,
              model: Optional[str] = None, no_model: bool = False, onnxruntime: bool = True,
              work: Optional[str] = None, models_root: Optional[Path] = None,
              platform: str = sys.platform) -> BuildSpec:
    spec = BuildSpec(name=check_name(name), onefile=onefile, onnxruntime=onnxruntime, platform=platform)
    spec.out = Path(out).resolve() if out else ROOT / "dist"
    spec.work = Path(work).resolve() if work else ROOT / "build" / f"pbrain-{spec.name}"
    spec.datas, spec.models, spec.model_note = select_models(
        model, no_model, models_root or ROOT / "models", spec.work / "models", onnx=onnxruntime)
    return spec


def pyinstaller_args(spec: BuildSpec) -> List[str]:
    """PyInstaller's arguments (after ``python -m PyInstaller``) for ``spec``."""
    args = [str(ENTRY), "--name", spec.exe_stem, "--onefile" if spec.onefile else "--onedir",
            "--console", "--noconfirm", "--clean", "--log-level", "WARN",
            "--distpath", str(spec.out), "--workpath", str(spec.work), "--specpath", str(spec.work),
            "--paths", str(ROOT)]
    for mod in runtime_modules():
        args += ["--hidden-import", mod]
    if spec.onnxruntime:
        args += ["--hidden-import", "onnxruntime", "--hidden-import", "numpy"]
    else:
        args += ["--hidden-import", "numpy"]
    for mod in EXCLUDES + OWN_EXCLUDES + (() if spec.onnxruntime else ("onnxruntime",)):
        args += ["--exclude-module", mod]
    for src, dest in spec.datas:
        args += ["--add-data", f"{src}{os.pathsep}{dest}"]
    return args


def bundle_bytes(path: Path) -> int:
    """Total size of a file, or of every file under a folder."""
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def pyinstaller_available() -> bool:
    return importlib.util.find_spec("PyInstaller") is not None


def build(spec: BuildSpec, zip_it: bool = False, verbose: bool = False) -> Dict[str, Any]:
    """Run PyInstaller for ``spec``; returns the summary printed as JSON (path, size, time, models)."""
    if not pyinstaller_available():
        raise BuildError("PyInstaller is not installed: pip install -e '.[build]' (or pip install pyinstaller)")
    spec.out.mkdir(parents=True, exist_ok=True)
    spec.work.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "PyInstaller", *pyinstaller_args(spec)]
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    t0 = time.perf_counter()
    res = subprocess.run(cmd, cwd=str(spec.work), env=env, text=True,
                         stdout=None if verbose else subprocess.PIPE, stderr=subprocess.STDOUT)
    secs = time.perf_counter() - t0
    if res.returncode != 0:
        tail = "" if verbose else "\n" + (res.stdout or "")[-4000:]
        raise BuildError(f"PyInstaller failed (exit {res.returncode}){tail}")
    if not spec.exe_path.is_file():
        raise BuildError(f"PyInstaller finished but {spec.exe_path} is missing")
    summary: Dict[str, Any] = {
        "exe": str(spec.exe_path),
        "bundle": str(spec.bundle_path),
        "layout": "onefile" if spec.onefile else "onedir",
        "bytes": bundle_bytes(spec.bundle_path),
        "build_s": round(secs, 1),
        "models": spec.models,
        "model_note": spec.model_note,
        "onnxruntime": spec.onnxruntime,
    }
    summary["mb"] = round(summary["bytes"] / 2 ** 20, 1)
    if zip_it:
        z = make_zip(spec)
        summary["zip"] = str(z)
        summary["zip_bytes"] = z.stat().st_size
    return summary


def make_zip(spec: BuildSpec) -> Path:
    """``<out>/pbrain-<name>.zip`` holding the exe (one file) or the one-folder bundle's contents at the top
    level (the exe next to ``_internal/``), as a Gomocup submission."""
    base = spec.out / spec.exe_stem
    if spec.onefile:
        return Path(shutil.make_archive(str(base), "zip", root_dir=str(spec.out), base_dir=spec.exe_name))
    return Path(shutil.make_archive(str(base), "zip", root_dir=str(spec.bundle_path)))


# ------------------------------------------------------------------------------------------ smoke check
def _proc_tree(pid: int) -> List[int]:
    """``pid`` and its descendants (Linux /proc; just ``[pid]`` elsewhere)."""
    if not os.path.isdir("/proc"):
        return [pid]
    children: Dict[int, List[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat", "rb") as f:
                    ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


def _vm_kb(pid: int) -> Dict[str, int]:
    """VmPeak, VmHWM (peak RSS) and VmRSS of ``pid`` in kB from /proc (empty elsewhere)."""
    vals: Dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmPeak", "VmHWM", "VmRSS", "VmSize"):
                    vals[k] = int(v.split()[0])
    except (OSError, ValueError):
        pass
    return vals


def _pipe(f: Optional[IO[bytes]], name: str) -> IO[bytes]:
    """The pipe ``f`` of a Popen started with ``name=subprocess.PIPE`` (never None there; checked for the type)."""
    if f is None:
        raise BuildError(f"brain process has no {name} pipe")
    return f


class _BrainProcess:
    """A brain started in a scratch folder for :func:`smoke`: its stdout lines are read by a thread (with the time
    each arrived), and the peak memory and process count of its process tree are sampled while it is waited on.
    Use as a context manager: leaving kills it if it still runs and keeps its stderr in :attr:`stderr`."""

    def __init__(self, exe: Sequence[str], cwd: str, env: Dict[str, str], timeout: float) -> None:
        import threading
        self.exe = list(exe)
        self.timeout = timeout
        self.replies: List[Tuple[float, str]] = []
        self.peak: Dict[str, int] = {}
        self.nprocs = 1
        self.stderr = b""
        self._got = threading.Condition()
        self.t0 = time.perf_counter()
        self.proc = subprocess.Popen(self.exe, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd=cwd, env=env, bufsize=0)
        self._stdin = _pipe(self.proc.stdin, "stdin")
        self._stdout = _pipe(self.proc.stdout, "stdout")
        self._stderr = _pipe(self.proc.stderr, "stderr")
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()

    def _pump(self) -> None:
        for raw in iter(self._stdout.readline, b""):
            with self._got:
                self.replies.append((time.perf_counter(), raw.decode("utf-8", "replace").rstrip("\r\n")))
                self._got.notify_all()

    def sample(self) -> None:
        """Update the peak memory (kB, summed over the tree) and the largest process count seen."""
        tree = _proc_tree(self.proc.pid)
        self.nprocs = max(self.nprocs, len(tree))
        tot: Dict[str, int] = {}
        for p in tree:
            for k, v in _vm_kb(p).items():
                tot[k] = tot.get(k, 0) + v
        for k, v in tot.items():
            self.peak[k] = max(self.peak.get(k, 0), v)

    def send(self, text: str) -> None:
        self._stdin.write(text.encode())
        self._stdin.flush()

    def wait_reply(self, n: int) -> Tuple[float, str]:
        """(arrival time, text) of the ``n``-th reply line (1-based), waiting at most the timeout; raises
        BuildError when it does not come (or the brain exits first)."""
        proc = self.proc
        end = time.perf_counter() + self.timeout
        with self._got:
            while len(self.replies) < n:
                left = end - time.perf_counter()
                if left <= 0 or proc.poll() is not None and len(self.replies) < n:
                    self._got.wait(0.2)  # a last look at output that was already written
                    if len(self.replies) >= n:
                        break
                    raise BuildError(f"{self.exe[0]}: no reply #{n} (exit {proc.poll()}; stderr "
                                     f"{self._stderr.read(500) if proc.poll() is not None else b''!r})")
                self._got.wait(min(left, 0.05))
                self.sample()
            return self.replies[n - 1]

    def __enter__(self) -> "_BrainProcess":
        return self

    def __exit__(self, *exc: Any) -> None:
        proc = self.proc
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        self._reader.join(timeout=2)
        self.stderr = self._stderr.read() or b""
        for f in (self._stdin, self._stdout, self._stderr):
            try:
                f.close()
            except OSError:
                pass


def smoke(exe: Sequence[str], turn_ms: int = 1000, max_node: int = 0, moves: int = 1,
          timeout: float = 60.0, env: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """Start the brain ``exe`` (a command list) in a scratch folder as GomocupJudge does (START and INFO written
    at once, then BEGIN), play ``moves`` moves against a fixed reply sequence, then END. Returns the replies,
    the times from process start to OK and to the first move (ms), the number of processes (bootloader
    children included) and, on Linux, the peak VmPeak/VmHWM/VmRSS summed over the process tree (kB)."""
    import tempfile
    e = dict(os.environ)
    for k in ("PYTHONUNBUFFERED", "PYGOMOKU_PLAYER", "PYGOMOKU_LOG", "PYGOMOKU_HOME", "PYGOMOKU_MODELS"):
        e.pop(k, None)
    e.update(env or {})
    exe = [str(a) for a in exe]
    if os.path.isfile(exe[0]):  # it runs in a scratch folder
        exe[0] = os.path.abspath(exe[0])
    with tempfile.TemporaryDirectory(prefix="pbrain-smoke-") as cwd, _BrainProcess(exe, cwd, e, timeout) as brain:
        brain.send(f"START 15\r\nINFO timeout_turn {turn_ms}\r\nINFO timeout_match 0\r\n"
                   f"INFO max_memory {DEFAULT_MAX_MEMORY}\r\nINFO max_node {max_node}\r\nINFO rule 0\r\nBEGIN\r\n")
        t_ok, ok = brain.wait_reply(1)
        t_mv, first = brain.wait_reply(2)
        brain.sample()
        played = [first]
        occupied = {first}
        loaded = _maps_mention(_proc_tree(brain.proc.pid), "onnxruntime")
        # the opponent plays squares with both coordinates even: no two adjacent, so never a five
        squares = [f"{x},{y}" for x, y in sorted(((x, y) for x in range(0, 15, 2) for y in range(0, 15, 2)),
                                                key=lambda p: ((p[0] * 5 + p[1] * 3) % 17, p))]
        for i in range(1, moves):
            opp = next(sq for sq in squares if sq not in occupied)
            occupied.add(opp)
            brain.send(f"TURN {opp}\r\n")
            _, mv = brain.wait_reply(2 + i)
            brain.sample()
            played.append(mv)
            occupied.add(mv)
            if not re.fullmatch(r"\d+,\d+", mv):  # the game is over (or the brain refused)
                break
        brain.send("END\r\n")
        try:
            rc = brain.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            rc = None
    t0 = brain.t0
    return {"ok": ok, "moves": played, "exit": rc, "stderr": brain.stderr.decode("utf-8", "replace")[:500],
            "start_to_ok_ms": round(1000 * (t_ok - t0), 1), "start_to_first_move_ms": round(1000 * (t_mv - t0), 1),
            "processes": brain.nprocs, "mem_kb": brain.peak, "onnxruntime_loaded": loaded}


def _maps_mention(pids: Sequence[int], word: str) -> Optional[bool]:
    """Whether any of ``pids`` has a file whose path contains ``word`` mapped (Linux; None elsewhere)."""
    if not os.path.isdir("/proc"):
        return None
    for p in pids:
        try:
            with open(f"/proc/{p}/maps", encoding="utf-8", errors="replace") as f:
                if word in f.read():
                    return True
        except OSError:
            continue
    return False


# ------------------------------------------------------------------------------------------ command line
def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser("build-pbrain", help="freeze engine.py into a pbrain-<name> executable (PyInstaller)",
                       description="Build a Gomocup brain executable with PyInstaller (see docs/BUILDING.md).")
    _add_arguments(p)
    return p


def _add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--name", default="pygomoku", help="brain name: the exe is pbrain-<name> (default: %(default)s)")
    p.add_argument("--onefile", action="store_true",
                   help="one self-unpacking file (runs as two processes) instead of one folder")
    p.add_argument("--out", default=None, help="output folder (default dist/)")
    m = p.add_mutually_exclusive_group()
    m.add_argument("--model", default=None,
                   help="ship this model (basename, one of its files, or a models folder with index.json) "
                        "instead of models/")
    m.add_argument("--no-model", action="store_true", help="ship no model (hand-written evaluator)")
    p.add_argument("--no-onnxruntime", action="store_true",
                   help="leave onnxruntime (and .onnx files) out: numpy inference only, a smaller bundle")
    p.add_argument("--work", default=None, help="PyInstaller work folder (default build/pbrain-<name>)")
    p.add_argument("--zip", action="store_true", help="also write <out>/pbrain-<name>.zip")
    p.add_argument("--dry-run", action="store_true", help="print the PyInstaller command as JSON; build nothing")
    p.add_argument("-v", "--verbose", action="store_true", help="show PyInstaller's output")


def run(args: argparse.Namespace) -> int:
    try:
        spec = make_spec(args.name, args.onefile, args.out, args.model, args.no_model,
                         onnxruntime=not args.no_onnxruntime, work=args.work)
        if args.dry_run:
            print(json.dumps({"exe": str(spec.exe_path), "model_note": spec.model_note,
                              "command": [sys.executable, "-m", "PyInstaller", *pyinstaller_args(spec)]},
                             indent=2))
            return 0
        print(f"building {spec.exe_path} ({'one file' if spec.onefile else 'one folder'}); {spec.model_note}",
              file=sys.stderr, flush=True)
        summary = build(spec, zip_it=args.zip, verbose=args.verbose)
    except BuildError as e:
        print(f"build-pbrain: {e}", file=sys.stderr)
        return 1
    print(json.dumps(summary))
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.build_pbrain",
                                description="Build a Gomocup brain executable with PyInstaller.")
    _add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
