"""One tournament in one output folder: :class:`Runner` prepares (or resumes) the folder, plays the missing
games (inline or on a worker pool), records each result as it comes and reports the standings.

The players and the schedule come from the configuration of :mod:`tools.tournament.config` (the command line
is :mod:`tools.tournament.cli`); the referee and time controls are :mod:`gomoku_ai.match` (a game's results
line in :mod:`tools.tournament.game`); the results file and standings are in :mod:`tools.tournament.results`;
the statistics in :mod:`gomoku_ai.rating`.

Output folder (``--out``)::

    tournament.json   the configuration, including the seed (written atomically; checked on resume)
    results.jsonl     one line per finished game, appended with fsync (the resume point)
    summary.json      standings, ratings, pairwise and match statistics, SPRT state (atomic)
    summary.txt       the same as text (atomic)
    tournament.pgn    every finished game for BayesElo / Ordo (atomic; PGN White = our Black, the first
                      mover; see :mod:`tools.tournament.pgn`)
    games/            one record per game: 000012-<black>-vs-<white>.sgf (and/or .psq)
    logs/             runner.log (main process), worker-N.log (one per pool worker on this machine): engine
                      stderr, warnings

Each line of ``results.jsonl`` is the referee's record (:func:`tools.tournament.game.play_game`; its
``termination`` is a :class:`~gomoku_ai.rules.Termination` value) plus
``black_net`` / ``white_net`` (the network version ``name@sha12`` that played that side, for ``model:``
players; else null) and ``worker`` (which worker played it: ``inline``, ``local-3``, ``ray-2@10.0.0.5:4242``).
Runs on different backends or worker counts differ only in ``worker`` and the timing fields.

Workers (``-j N``, ``--backend``): with ``-j 1`` and the local backend the games are played in this process;
otherwise by N workers of a :mod:`gomoku_ai.workers` pool, one task per game: local processes (``--backend
local``, the default) or Ray actors (``--backend ray``; ``--address HOST:PORT`` of a cluster's head, ``auto``
for the cluster running on this machine, none for a private instance on this machine). Each worker loads its
players once and keeps them (networks, engine processes). A worker that dies or overruns the game's wall limit
loses that game only: it is played again on a fresh worker once, else recorded as not played (no result line;
``--resume`` plays it). With Ray on several machines, the package and every engine command must exist on every
machine, this one included (the players are checked here first); ``model:`` networks are shipped to the workers
by value (their files need only exist here).

Checks before anything is written (:meth:`Runner.prepare`): the folder and, on resume, the stored configuration;
the schedule (openings read and checked against the board and the rule); and, when games are left to play, every
player (:mod:`tools.tournament.preflight`: each model loaded, each external engine started once and answering
``ABOUT`` and ``START`` at the board size, then ended). A failure is one line and exit code 2, and a new output
folder is not created, so the corrected command can use it.

Resume: rerun the same command with the same ``--out`` and ``--resume``. Without ``--resume`` an existing,
non-empty output folder is refused ("use --resume to continue, or choose a new folder"), so that a finished or
unrelated run is never extended by accident; ``--resume`` on a missing or empty folder starts a new run, and on a
non-empty folder without ``tournament.json`` is refused. Finished games (complete lines of ``results.jsonl``)
are skipped, a torn last line is discarded, the schedule is rebuilt from the recorded seed, and only the
missing games are played: with deterministic players (in-process, fixed visits) a resumed run ends with
exactly the results of an uninterrupted one. ``--games`` may be raised to extend a finished run. Changing
anything that shapes the schedule or the players (players, format, openings, rule, size, time control, visits,
draw-after, seed) is refused; a changed player is named with its old and new spec. A changed file behind a
player (a model, an engine's program: sha256 in ``tournament.json``) only warns.

Display: on a terminal, a live table (rank, Elo +/- 95 %, LOS against the next player, games, W-D-L, score,
games left, time losses, crashes, other forfeits) with a progress bar (:mod:`tools.tournament.live`); the
finished-game lines scroll above it (``--quiet``: none). When stdout is not a terminal (or with ``--no-live``):
plain lines, and the standings every ``--report-every`` games. The full text summary is printed at the end.

Never hang: every wait has a deadline (engine replies: budget + tolerance; start-up and START: the start-up
timeout; moves without a time limit: the move timeout; in-process searches: the same deadlines, in a helper
thread; workers: a per-game wall limit, after which the worker and its engines are killed and the game is
replayed once).
"""
from __future__ import annotations

import json
import logging
import os
import random
import re
import sys
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple

from gomoku_ai.match import TimeControl
from gomoku_ai.records import GameRecord, GameResult, atomic_write_text, save_record
from gomoku_ai.rules import BLACK, WHITE, Rule, Termination
from gomoku_ai.workers import WorkerError

from .config import TournamentError, check_folder, check_resumed, default_concurrency, read_config
from .game import GameSpec
from .pgn import write_pgn
from .preflight import check_players
from .results import (ResultsFile, err_text, format_summary, json_safe, match_score_line, perfect_text,
                      summarize)
from .schedule import build_schedule, file_sha256, load_book, pairings, parse_openings_arg
from .worker import WORKER_TARGET, GameRunner, game_limit_s, shipped_models

__all__ = ["Runner", "record_of"]

log = logging.getLogger("gomoku.tournament")


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", name).strip("_")[:40] or "player"


def record_of(res: Dict[str, Any], config: Dict[str, Any]) -> GameRecord:
    """A :class:`GameRecord` of a finished game (the rejected move, if any, is not on the board but in the
    root comment)."""
    winner = {"black": BLACK, "white": WHITE, None: None}[res["winner"]]
    term = Termination(res["termination"])   # results.jsonl holds the enum's value
    note = f"game {res['game']} pair {res['pair']}; {res['result']} by {res['termination']}"
    if res.get("reason"):
        note += f": {res['reason']}"
    if res.get("offender"):
        note += f" ({res['offender']})"
    if res.get("rejected_move"):
        note += f"; rejected move {res['rejected_move'][0]},{res['rejected_move'][1]}"
    if res.get("opening") is not None:
        note += f"; opening {res['opening']} transform {res['transform']} ({res['opening_plies']} stones)"
    note += f"; time control {config['tc']}"
    meta: Dict[str, Any] = {
        "sgf": {"TE": res["termination"], "GN": f"game {res['game']}", "C": note,
                "EV": f"gomoku tournament ({config['format']})"},
        "move_comments": {int(k): v for k, v in (res.get("comments") or {}).items()},
    }
    return GameRecord(config["width"], config["height"], Rule.parse(config["rule"]),
                      [tuple(m) for m in res["moves"]], GameResult(winner, term), res["black"], res["white"],
                      list(res["times_ms"]), meta)


# ------------------------------------------------------------------------------------------ runner
class Runner:
    """One tournament in one output folder (see the module docstring)."""

    def __init__(self, config: Dict[str, Any], out_dir: str, echo: Any = None, resume: bool = False,
                 live: Any = None) -> None:
        """``resume``: continue the run in ``out_dir`` (else a non-empty folder is refused). ``live``: None for
        plain lines, True for a :class:`~tools.tournament.live.LiveDisplay` on stdout, or a callable
        ``(total, done, title) -> LiveDisplay`` (tests pass one with their own console)."""
        self.config = dict(config)
        self.out = os.path.abspath(out_dir)
        self._echo = echo if echo is not None else (lambda s: print(s, flush=True))
        self.resume = bool(resume)
        self.live_factory = live
        self.live: Any = None
        self.results: List[Dict[str, Any]] = []
        self.done: Dict[int, Dict[str, Any]] = {}
        self.schedule: List[GameSpec] = []
        self.store: Optional[ResultsFile] = None
        self.stop_reason: Optional[str] = None
        self._last_summary = 0.0
        self._since_report = 0
        self._summary_cache: Optional[Tuple[int, Dict[str, Any]]] = None
        self.abandoned: List[int] = []
        self.warnings: List[str] = []
        self.pool: Any = None   # the worker pool while games are played on one (tests kill its workers)

    def echo(self, text: str) -> None:
        if self.live is not None:
            self.live.print(text)
        else:
            self._echo(text)

    # ------------------------------------------------------------------ set-up
    def prepare(self) -> None:
        """Check everything, then write. The checks, none of which writes: the folder
        (:func:`~tools.tournament.config.check_folder`; on resume the stored configuration,
        :func:`~tools.tournament.config.check_resumed`), the schedule (openings that fit the board and the rule),
        the finished games of ``results.jsonl`` and, when games are left to play, every player
        (:func:`~tools.tournament.preflight.check_players`: models loaded, engines started and ended). Only then
        are the folder, ``games/`` and ``logs/`` created and ``tournament.json`` written, so a run refused here
        leaves no folder behind (on resume, a torn last line of ``results.jsonl`` is cut away when it is read:
        :meth:`~tools.tournament.results.ResultsFile.load`). Raises TournamentError
        (:class:`~tools.tournament.preflight.PlayerCheckError` for a player)."""
        check_folder(self.out, self.resume)
        tj = os.path.join(self.out, "tournament.json")
        c = self.config
        if os.path.exists(tj):
            try:
                stored = read_config(self.out)
            except TournamentError as e:
                raise TournamentError(f"{e}; use a new --out folder") from None
            check_resumed(stored, c, self.out, self._warn)
        if c.get("seed") is None:
            c["seed"] = random.SystemRandom().randrange(1, 2**31)
        self.schedule = self._build_schedule()
        self._load_results()
        if self.jobs() and not self.sprt_decided():
            check_players(c)
        os.makedirs(os.path.join(self.out, "games"), exist_ok=True)
        os.makedirs(os.path.join(self.out, "logs"), exist_ok=True)
        atomic_write_text(tj, json.dumps(c, indent=2, sort_keys=True) + "\n")

    def _build_schedule(self) -> List[GameSpec]:
        """The games of the configuration (the opening book read and checked against the board and the rule);
        TournamentError when they cannot be made."""
        c = self.config
        kind, path, stones = parse_openings_arg(c["openings"])
        rule = Rule.parse(c["rule"])
        book = None
        if kind == "file":
            assert path is not None   # parse_openings_arg gives a file its path
            try:
                if file_sha256(path) != c["openings_sha256"]:  # pragma: no cover - changed during the run
                    raise TournamentError(f"{path} changed")
                book, warns = load_book(path, c["width"], c["height"], rule)
            except OSError as e:
                raise TournamentError(f"--openings {path}: {e.strerror or e}") from None
            except ValueError as e:   # its text names the file
                raise TournamentError(f"--openings {e}") from None
            for w in warns:
                self._warn(w)
        try:
            return build_schedule(len(c["names"]), c["format"], c["games"], c["width"], c["height"], rule,
                                  c["seed"], kind, book, stones, c["openings_order"], c["transform"])
        except ValueError as e:
            raise TournamentError(f"--openings {c['openings']}: {e}" if kind == "random" else str(e)) from None

    def _load_results(self) -> None:
        """The finished games of ``results.jsonl`` (none in a new folder), checked against the schedule."""
        c = self.config
        self.store = ResultsFile(os.path.join(self.out, "results.jsonl"))
        records, warns = self.store.load()
        for w in warns:
            self._warn(w)
        by_id = {g.game: g for g in self.schedule}
        names = c["names"]
        for r in records:
            g = by_id.get(r["game"])
            if g is not None and (r.get("black") != names[g.black] or r.get("white") != names[g.white]):
                raise TournamentError(f"results.jsonl game {r['game']} was {r.get('black')} vs {r.get('white')}, "
                                      f"the schedule says {names[g.black]} vs {names[g.white]}: not the same "
                                      "tournament")
            self.done[r["game"]] = r
            self.results.append(r)

    def _warn(self, msg: str) -> None:
        self.warnings.append(msg)
        log.info("warning: %s", msg)
        self.echo(f"warning: {msg}")

    # ------------------------------------------------------------------ results
    def summary(self) -> Dict[str, Any]:
        """The standings of every finished game (computed once per new result)."""
        key = len(self.results)
        if self._summary_cache is not None and self._summary_cache[0] == key:
            return self._summary_cache[1]
        c = self.config
        names = c["names"]
        anchor = names.index(c["anchor"]) if c.get("anchor") else None
        s = summarize(self.results, names, c["format"], pairings(len(names), c["format"]), len(self.schedule),
                      c.get("sprt"), c.get("prior", 2.0), anchor, c.get("anchor_elo", 0.0))
        self._summary_cache = (key, s)
        return s

    def header(self) -> str:
        c = self.config
        return (f"Tournament: {c['format']}, {len(c['names'])} players, {c['rule']} {c['width']}x{c['height']}, "
                f"tc {c['tc']}" + (f", visits {c['visits']}" if c.get("visits") else "")
                + f", openings {os.path.basename(c['openings'])}"
                + (f", draw after {c['draw_after']} plies" if c.get("draw_after") else "")
                + f", seed {c['seed']}")

    def write_summary(self, force: bool = False) -> Dict[str, Any]:
        now = time.monotonic()
        if not force and now - self._last_summary < 2.0:
            return {}
        self._last_summary = now
        s = dict(self.summary())
        s["stop_reason"] = self.stop_reason
        s["names"] = self.config["names"]
        atomic_write_text(os.path.join(self.out, "summary.json"),
                          json.dumps(json_safe(s), indent=1, allow_nan=False) + "\n")
        atomic_write_text(os.path.join(self.out, "summary.txt"), format_summary(s, self.header()))
        try:
            write_pgn(os.path.join(self.out, "tournament.pgn"), self.results, self.config)
        except (OSError, ValueError) as e:
            self._warn(f"cannot write tournament.pgn: {e}")
        return s

    def games_left(self) -> List[int]:
        """Games each player still has in the schedule."""
        left = [0] * len(self.config["names"])
        for g in self.schedule:
            if g.game not in self.done:
                left[g.black] += 1
                left[g.white] += 1
        return left

    def update_live(self) -> None:
        if self.live is not None:
            self.live.update(self.summary(), self.games_left(), len(self.done), len(self.schedule))

    def sprt_decided(self) -> Optional[str]:
        c = self.config
        if not c.get("sprt"):
            return None
        s = self.summary()
        d = s.get("sprt", {}).get("decision")
        return d

    def record(self, res: Dict[str, Any]) -> None:
        """Save one finished game: record files first, then the results line (the commit point)."""
        c = self.config
        base = f"{res['game']:06d}-{_safe(res['black'])}-vs-{_safe(res['white'])}"
        for ext in c.get("records", []):
            try:
                save_record(record_of(res, c), os.path.join(self.out, "games", f"{base}.{ext}"))
            except (ValueError, OSError) as e:
                self._warn(f"game {res['game']}: cannot write the {ext} record: {e}")
        assert self.store is not None
        self.store.append(res)
        self.done[res["game"]] = res
        self.results.append(res)
        if not c.get("quiet"):
            how = res["termination"] + (f": {res['reason']}" if Termination(res["termination"]) is not
                                        Termination.FIVE and res.get("reason") else "")
            if res.get("offender"):
                how += f" ({res['offender']})"
            self.echo(f"Finished game {res['game']} ({res['black']} vs {res['white']}): {res['result']} "
                      f"{{{how}}} [{len(self.done)}/{len(self.schedule)}]")
        self._since_report += 1
        self.write_summary()
        self.update_live()

    def maybe_report(self, pair_complete: bool) -> None:
        if self.live is not None:
            return  # the live table is the report
        c = self.config
        every = c.get("report_every") or 0
        if c["format"] == "match" and not every:
            if pair_complete:
                self._print_match()
            return
        every = every or 20
        if self._since_report >= every:
            self._since_report = 0
            self.echo(format_summary(self.summary(), self.header()).rstrip())

    def _print_match(self) -> None:
        s = self.summary()
        ps = s["pairings"][0]
        if not ps["games"]:
            return
        names = self.config["names"]
        t = ps["trinomial"]
        line = match_score_line(names[0], names[1], ps)
        if ps.get("perfect_bound") is not None:
            line += f"; {perfect_text(ps, s['confidence'])}" + (f"; penta {ps['penta']}" if ps["pairs"] else "")
        else:
            line += f"; Elo {t['elo']:+.1f} +/- {err_text(t)}"
            if ps["pairs"]:
                p = ps["pentanomial"]
                line += f"; penta {ps['penta']} Elo {p['elo']:+.1f} +/- {err_text(p)}"
        if "sprt" in s:
            sp = s["sprt"]
            line += f"; LLR {sp['llr']:.2f} [{sp['lower']:.2f}, {sp['upper']:.2f}]"
        self.echo(line)

    # ------------------------------------------------------------------ play
    def jobs(self) -> List[Tuple[int, List[GameSpec]]]:
        by_pair: Dict[int, List[GameSpec]] = {}
        for g in self.schedule:
            if g.game not in self.done:
                by_pair.setdefault(g.pair, []).append(g)
        return sorted(by_pair.items())

    def _pair_complete(self, pair: int) -> bool:
        return sum(1 for g in (2 * pair, 2 * pair + 1) if g in self.done) == 2

    def run(self) -> int:
        """Play every missing game (or until the SPRT decides). Returns the exit code."""
        c = self.config
        if self.done:
            self.echo(f"Resuming {self.out}: {len(self.done)} of {len(self.schedule)} games already finished")
        self.echo(self.header())
        if c.get("sprt"):
            d = self.sprt_decided()
            if d:
                self.stop_reason = f"SPRT: {d} accepted"
        jobs = [] if self.stop_reason else self.jobs()
        conc = max(1, min(int(c.get("concurrency") or 1), len(jobs) or 1))
        tc = TimeControl.parse(c["tc"])
        if tc.limited and conc > default_concurrency():
            self._warn(f"-j {conc} with a time control on {os.cpu_count()} CPUs: engines may compete for "
                       "cores, which skews time-based results")
        code = 0
        handler = logging.FileHandler(os.path.join(self.out, "logs", "runner.log"), encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root = logging.getLogger()
        old_level = root.level
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        live = None
        try:
            if jobs and self.live_factory:
                live = self._make_live()
                live.__enter__()
                self.live = live
                self.update_live()
            if jobs:
                if conc == 1 and (c.get("backend") or "local") == "local":
                    self._run_inline(jobs)
                else:
                    self._run_pool(jobs, conc)
        except (TournamentError, WorkerError) as e:
            sys.stderr.write(f"gomoku tournament: {e}\n")
            log.error("%s", e)
            code = 2
        except KeyboardInterrupt:
            self.stop_reason = "interrupted"
            self.echo("Interrupted: finished games are saved; rerun the same command with --resume to continue.")
            code = 130
        finally:
            if live is not None:
                try:
                    self.update_live()
                    live.__exit__(None, None, None)
                except Exception:  # noqa: BLE001 - the display must not lose the results
                    log.exception("closing the live display failed")
                self.live = None
            if self.store is not None:
                self.store.close()
            root.removeHandler(handler)
            root.setLevel(old_level)
            handler.close()
        s = self.write_summary(force=True)
        self.echo(format_summary(s, self.header()).rstrip())
        if self.stop_reason:
            self.echo(f"Stopped: {self.stop_reason}")
        if self.abandoned and code == 0:
            self.echo(f"Incomplete: games {self.abandoned} were abandoned; rerun the same command with --resume "
                      "to play them.")
            code = 1
        return code

    def _make_live(self) -> Any:
        if callable(self.live_factory):
            return self.live_factory(len(self.schedule), len(self.done), self.header())
        from .live import LiveDisplay   # rich, only for a live table
        return LiveDisplay(len(self.schedule), len(self.done), self.header())

    def _check_sprt(self) -> bool:
        if self.config.get("sprt") and self.stop_reason is None:
            d = self.sprt_decided()
            if d:
                k = self.summary()["sprt"]["pairs"]
                self.stop_reason = f"SPRT: {d} accepted after {k} pairs ({2 * k} games)"
                self.echo(self.stop_reason)
                return True
        return self.stop_reason is not None

    def _run_inline(self, jobs: List[Tuple[int, List[GameSpec]]]) -> None:
        runner = GameRunner(self.config)
        try:
            for pair, games in jobs:
                for g in games:
                    res = runner.play(g)
                    res["worker"] = "inline"
                    self.record(res)
                complete = self._pair_complete(pair)
                self.maybe_report(complete)
                if complete and self._check_sprt():
                    break
        finally:
            runner.close()

    def _run_pool(self, jobs: List[Tuple[int, List[GameSpec]]], conc: int) -> None:
        """Play the games of ``jobs`` on a worker pool (``config["backend"]``), one task per game; results are
        recorded here as they come (in finishing order), exactly as the inline path records them."""
        from gomoku_ai.workers import Task, WorkerSpec, make_pool   # looked up per run: tests replace make_pool
        c = self.config
        backend = c.get("backend") or "local"
        kwargs: Dict[str, Any] = {"config": c, "log_dir": os.path.join(self.out, "logs")}
        if backend == "ray":
            models = shipped_models(c, self._warn)
            if models:
                kwargs["models"] = models
        spec = WorkerSpec(WORKER_TARGET, kwargs, threads=1)
        pool = make_pool(spec, conc, backend=backend, address=c.get("address"), max_attempts=2)
        log.info("workers: %s", pool.describe())

        def tasks() -> Iterator[Task]:
            for _, games in jobs:
                for g in games:
                    yield Task(g.game, g.to_dict(), limit_s=game_limit_s(c, g))

        self.pool = pool
        try:
            for r in pool.run(tasks(), stop=lambda: self.stop_reason is not None):
                if r.kind == "error":
                    # a bug in the runner, not a result: the finished games stay saved, the run stops
                    # with its summary, and the traceback goes to the log
                    log.error("game %s failed on worker %s:\n%s", r.key, r.worker, r.error)
                    self.abandoned.append(int(r.key))
                    last = (r.error or "").strip().splitlines()[-1:] or ["unknown error"]
                    raise TournamentError(f"game {r.key} failed on worker {r.worker}: {last[0]} (traceback "
                                          f"in {os.path.join(self.out, 'logs', 'runner.log')})")
                if r.kind == "lost":
                    self.abandoned.append(int(r.key))
                    self._warn(f"game {r.key} was not played: {r.error}; it is not scored (rerun with --resume "
                               "to play it)" + ("; the SPRT reads pairs in schedule order and cannot decide past "
                                                "its pair until it is played" if c.get("sprt") else ""))
                    continue
                res = dict(r.value)
                res["worker"] = r.worker
                if r.attempts > 1:
                    self._warn(f"game {r.key}: played again on {r.worker} after its worker was lost")
                if res["game"] in self.done:
                    continue
                self.record(res)
                complete = self._pair_complete(res["pair"])
                self.maybe_report(complete)
                if complete:
                    self._check_sprt()
        finally:
            self.pool = None
            pool.close()
