"""A tournament's configuration: the parsed command line -> the JSON written to ``tournament.json``, and the
checks that a resumed output folder holds the same tournament.

:func:`build_config` validates the options (raising :class:`TournamentError` or
:class:`~tools.tournament.players.SpecError`) and returns the configuration every other part reads: the
players as given (their tokens) and their names, the format, games per pairing, openings (with their file's
sha256), rule, size, time control, timeouts (ms), seed, workers, records and the rating / SPRT settings.
:data:`SCHEDULE_KEYS` are the keys that shape the schedule and the players: a resumed run must have the same
(:func:`check_resumed`); :func:`check_folder` refuses an output folder that a run must not write into.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from gomoku_ai.board import MAX_SIZE, MIN_SIZE
from gomoku_ai.match import TimeControl
from gomoku_ai.rules import Rule
from gomoku_ai.workers import BACKENDS

from .players import parse_players, split_player_tokens
from .schedule import file_sha256, pairings, parse_openings_arg

__all__ = ["CONFIG_VERSION", "SCHEDULE_KEYS", "TournamentError", "build_config", "check_folder", "check_resumed",
           "default_concurrency", "player_files"]

#: configuration keys that must not change when a run is resumed
SCHEDULE_KEYS = ("players", "format", "openings", "openings_sha256", "openings_order", "transform", "rule",
                 "width", "height", "tc", "visits", "draw_after", "seed")
CONFIG_VERSION = 1


class TournamentError(Exception):
    """A configuration or resume problem (reported, exit code 2)."""


def default_concurrency() -> int:
    """Games at a time by default: half the CPUs (one core per engine of a game)."""
    return max(1, (os.cpu_count() or 2) // 2)


def _openings_setting(arg: str) -> Tuple[str, Optional[str]]:
    """``--openings`` as stored: ``none``, ``random:N`` or the file's absolute path, with the file's sha256."""
    try:
        kind, path, stones = parse_openings_arg(arg)
    except ValueError as e:
        raise TournamentError(str(e)) from None
    if kind == "none":
        return "none", None
    if kind == "random":
        return f"random:{stones}", None
    if path is None:  # parse_openings_arg gives a path with kind "file"
        raise TournamentError(f"--openings: no file in {arg!r}")
    full = os.path.abspath(path)
    if not os.path.isfile(full):
        raise TournamentError(f"--openings: no such file {path}")
    return full, file_sha256(full)


def _anchor_setting(arg: Optional[str], names: List[str]) -> Tuple[Optional[str], float]:
    """``--anchor NAME[=ELO]``: the anchored player and its Elo (None, 0.0 without one)."""
    if not arg:
        return None, 0.0
    nm, _, val = arg.partition("=")
    if nm not in names:
        raise TournamentError(f"--anchor: no player named {nm!r} (players: {', '.join(names)})")
    try:
        return nm, float(val) if val else 0.0
    except ValueError:
        raise TournamentError(f"--anchor: bad Elo {val!r}") from None


def build_config(args: argparse.Namespace) -> Dict[str, Any]:
    """The JSON configuration from parsed arguments (raises TournamentError / SpecError)."""
    groups = split_player_tokens(args.players)
    specs = parse_players(args.players)
    n = len(specs)
    fmt = args.format
    if fmt == "auto":
        fmt = "match" if n == 2 else "roundrobin"
    pairings(n, fmt)  # validates
    if args.sprt and fmt != "match":
        raise TournamentError("--sprt is for a two-player match")
    games = args.games if args.games is not None else (1000 if args.sprt else 10)
    if games < 1:
        raise TournamentError("--games must be at least 1")
    if games % 2:
        games += 1
    try:
        rule = Rule.parse(args.rule)
    except ValueError as e:
        raise TournamentError(str(e)) from None
    if not MIN_SIZE <= args.size <= MAX_SIZE:
        raise TournamentError(f"--size {args.size}: a board side is {MIN_SIZE} to {MAX_SIZE} (15 or 20 in Gomocup)")
    try:
        tc = TimeControl.parse(args.tc)
    except ValueError as e:
        raise TournamentError(str(e)) from None
    openings, sha = _openings_setting(args.openings)
    records = [r for r in re.split(r"[,\s]+", args.records.lower()) if r]
    if records == ["none"]:
        records = []
    if any(r not in ("sgf", "psq") for r in records):
        raise TournamentError("--records is sgf, psq, sgf,psq or none")
    names = [s.name for s in specs]
    anchor, anchor_elo = _anchor_setting(args.anchor, names)
    if args.draw_after is not None and args.draw_after < 1:
        raise TournamentError("--draw-after must be positive")
    if args.visits is not None and args.visits < 1:
        raise TournamentError("--visits must be positive")
    _check_numbers(args)
    conc = args.concurrency if args.concurrency is not None else default_concurrency()
    if conc < 1:
        raise TournamentError("-j must be at least 1")
    backend = getattr(args, "backend", "local") or "local"
    address = getattr(args, "address", None)
    if backend not in BACKENDS:
        raise TournamentError(f"--backend is one of {', '.join(BACKENDS)}")
    if address and backend != "ray":
        raise TournamentError("--address is for --backend ray")
    return {
        "version": CONFIG_VERSION, "player_files": player_files(specs),
        "players": groups, "names": names, "format": fmt, "games": games,
        "openings": openings, "openings_sha256": sha, "openings_order": args.openings_order,
        "transform": bool(args.transform), "rule": rule.value, "width": args.size, "height": args.size,
        "tc": str(tc), "visits": args.visits, "draw_after": args.draw_after,
        "tolerance_ms": float(args.tolerance), "move_timeout_ms": float(args.move_timeout) * 1000.0,
        "startup_timeout_ms": float(args.startup_timeout) * 1000.0,
        "seed": args.seed, "concurrency": conc, "backend": backend, "address": address, "records": records,
        "sprt": ({"elo0": args.elo0, "elo1": args.elo1, "alpha": args.alpha, "beta": args.beta,
                  "model": args.sprt_model} if args.sprt else None),
        "prior": float(args.prior), "anchor": anchor, "anchor_elo": anchor_elo,
        "report_every": args.report_every, "quiet": bool(args.quiet),
    }


def _check_numbers(args: argparse.Namespace) -> None:
    """The timeouts, the prior, the report interval and (with ``--sprt``) the test's settings; TournamentError."""
    for opt, v in (("--tolerance", args.tolerance), ("--prior", args.prior), ("--report-every", args.report_every)):
        if not (math.isfinite(v) and v >= 0):
            raise TournamentError(f"{opt} must not be negative, not {v:g}")
    for opt, v in (("--move-timeout", args.move_timeout), ("--startup-timeout", args.startup_timeout)):
        if not (math.isfinite(v) and v > 0):
            raise TournamentError(f"{opt} must be positive, not {v:g}")
    if args.sprt:
        for opt, v in (("--alpha", args.alpha), ("--beta", args.beta)):
            if not 0 < v < 1:
                raise TournamentError(f"{opt} must be between 0 and 1, not {v:g}")
        if not args.elo0 < args.elo1:
            raise TournamentError(f"--elo0 ({args.elo0:g}) must be below --elo1 ({args.elo1:g})")


def player_files(specs: Sequence[Any]) -> Dict[str, Dict[str, str]]:
    """sha256 of the files behind each player (a model file; an engine's executable or script), recorded in
    tournament.json so that a changed engine or checkpoint is noticed on resume."""
    out: Dict[str, Dict[str, str]] = {}
    for sp in specs:
        paths: List[str] = []
        if sp.kind == "model" and sp.model:
            paths = [sp.model, os.path.splitext(sp.model)[0] + ".json"]
        elif sp.external and sp.cmd:
            paths = [os.path.join(sp.cwd or "", t) for t in sp.cmd]
        files = {}
        for path in paths:
            if os.path.isfile(path):
                try:
                    files[os.path.abspath(path)] = file_sha256(path)
                except OSError:   # unreadable now: not recorded, so there is nothing to compare on resume
                    pass
        out[sp.name] = files
    return out


# ------------------------------------------------------------------------------------------ resume checks
def read_config(folder: "str | os.PathLike[str]") -> Dict[str, Any]:
    """The configuration a finished or running tournament wrote to ``folder/tournament.json``; a
    missing or unreadable file, or one that is not a JSON object, is a TournamentError naming it."""
    path = os.path.join(folder, "tournament.json")
    try:
        with open(path, encoding="utf-8") as f:
            conf = json.load(f)
    except (OSError, ValueError) as e:
        raise TournamentError(f"{path}: not a tournament configuration ({e})") from None
    if not isinstance(conf, dict):
        raise TournamentError(f"{path}: not a tournament configuration (not an object)")
    return conf


def check_folder(out: str, resume: bool) -> None:
    """Refuse ``out`` when it is not a folder, when it is not empty and ``resume`` is off, and when it is not
    empty but holds no ``tournament.json`` (nothing to resume). A missing or empty folder is always fine."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise TournamentError(f"--out {out} is not a folder")
    try:
        entries = os.listdir(out)
    except FileNotFoundError:
        entries = []
    except OSError as e:
        raise TournamentError(f"--out {out}: {e}") from None
    if not entries:
        return
    if not resume:
        raise TournamentError(f"{out} is not empty (an earlier run?): use --resume to continue, "
                              "or choose a new folder")
    if not os.path.exists(os.path.join(out, "tournament.json")):
        raise TournamentError(f"{out} is not empty and holds no tournament.json: there is nothing to "
                              "resume; choose a new folder")


def check_resumed(stored: Dict[str, Any], config: Dict[str, Any], out: str, warn: Callable[[str], None]) -> None:
    """Check that ``config`` continues the tournament ``stored`` (the ``tournament.json`` in ``out``): the same
    players (their specs and options, token for token), and the other :data:`SCHEDULE_KEYS` equal (an openings
    file by its sha256, so that it may move), else TournamentError. A seed left unset in ``config`` is taken
    from ``stored`` (``config`` is updated). With the same players, changed player files (``player_files``
    sha256: a model, an engine's program) only ``warn``: the results then mix old and new versions."""
    c = config
    if c.get("seed") is None:
        c["seed"] = stored.get("seed")
    diff = [k for k in SCHEDULE_KEYS if stored.get(k) != c.get(k) and k not in ("openings", "players")]
    if stored.get("openings_sha256") is None and stored.get("openings") != c.get("openings"):
        diff.append("openings")
    others = ("" if not diff else f"; the settings changed too ({', '.join(diff)}). Stored: "
              + ", ".join(f"{k}={stored.get(k)!r}" for k in diff))
    if stored.get("players") != c.get("players"):
        raise TournamentError(f"{out}: {_players_changed(stored.get('players') or [], c.get('players') or [])}; "
                              "a resume must use the same players (rerun with the same player arguments and "
                              "--resume, or use a new --out folder)" + others)
    if diff:
        raise TournamentError(
            f"{out} holds a tournament with different settings ({', '.join(diff)}); "
            "rerun with the same arguments and --resume, or use a new --out folder. Stored: "
            + ", ".join(f"{k}={stored.get(k)!r}" for k in diff))
    if stored.get("player_files") not in (None, c.get("player_files")):
        new_files = c.get("player_files", {})
        changed = [k for k in new_files if stored["player_files"].get(k) != new_files.get(k)]
        warn(f"the files of {', '.join(changed) or 'some players'} changed since the run started "
             "(sha256 in tournament.json): old and new results are mixed")


def _players_changed(old: Sequence[Sequence[str]], new: Sequence[Sequence[str]]) -> str:
    """What changed between two player lists (each player: its spec token and options)."""
    def text(tokens: Sequence[str]) -> str:
        return " ".join(tokens)
    if len(old) != len(new):
        return (f"the players changed from {', '.join(repr(text(p)) for p in old)} "
                f"to {', '.join(repr(text(p)) for p in new)}")
    return "; ".join(f"player {i + 1}'s spec changed from {text(a)!r} to {text(b)!r}"
                     for i, (a, b) in enumerate(zip(old, new)) if list(a) != list(b))
