"""The tournament runner (tools/tournament/): player specs, the schedule, a short round robin of in-process
players, external engines (our engine.py and a crashing fake), --resume after a kill (same results as an
uninterrupted run) or a torn results line, the PGN file read back (and as Ordo scans it), the live table,
an SPRT match that stops when decided, worker processes (-j 2), and a stuck in-process search."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gomoku_ai import rating as R
from gomoku_ai.records import read_psq, read_sgf
from gomoku_ai.rules import Rule
from tools.tournament import cli as T
from gomoku_ai.match import GameConfig, TimeControl
from tools.tournament.players import (InProcessPlayer, SpecError, parse_player, parse_players,
                                      split_player_tokens)
from tools.tournament.results import ResultsFile, format_summary
from tools.tournament.schedule import build_schedule, transform_point

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "engine.py"
PISKVORK = Path("/work/shared/data/openings/piskvork_openings.txt")


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)
    monkeypatch.delenv("PYGOMOKU_PLAYER", raising=False)


def run_cli(args, capsys=None):
    code = T.main([str(a) for a in args])
    out = capsys.readouterr().out if capsys is not None else ""
    return code, out


def results(out_dir):
    recs, warns = ResultsFile(str(Path(out_dir) / "results.jsonl")).load()
    return recs


def finished_ids(text):
    return [int(m) for m in re.findall(r"Finished game (\d+) ", text)]


#: fields of a result line that depend on the clock, not on the play
TIMING = ("times_ms", "started_at", "duration_s", "comments", "clock_ms")


def play_only(recs):
    return [{k: v for k, v in r.items() if k not in TIMING} for r in sorted(recs, key=lambda r: r["game"])]


# ------------------------------------------------------------------------------------------ PGN reader
_TAG = re.compile(r'^\[(\w+) "((?:[^"\\]|\\.)*)"\]\s*$')
_TERM = ("1-0", "0-1", "1/2-1/2", "*")


def read_pgn(text):
    """A small PGN reader: ';' comment lines and '%' escape lines skipped, tag pairs, movetext with brace
    comments, a game ends at its termination marker. Returns [{"tags": {...}, "order": [...], "comment": str,
    "termination": str}]."""
    games, tags, order, move_lines = [], {}, [], []
    for line in text.splitlines():
        if line.startswith(";") or line.startswith("%"):
            continue
        m = _TAG.match(line)
        if m:
            assert not move_lines, f"a tag inside movetext: {line!r}"
            tags[m.group(1)] = re.sub(r"\\(.)", r"\1", m.group(2))
            order.append(m.group(1))
            continue
        if not line.strip():
            continue
        assert tags, f"movetext before any tag: {line!r}"
        move_lines.append(line)
        movetext = " ".join(move_lines)
        bare = re.sub(r"\{[^}]*\}", " ", movetext)
        if "{" in bare:
            continue  # a comment still open
        toks = bare.split()
        if toks and toks[-1] in _TERM:
            comments = re.findall(r"\{([^}]*)\}", movetext)
            games.append({"tags": tags, "order": order, "comment": " ".join(comments), "termination": toks[-1]})
            tags, order, move_lines = {}, [], []
    assert not tags and not move_lines, "an unfinished game at the end of the file"
    return games


def ordo_scan(text):
    """Ordo's pgnget.c, line by line: strstr for [White ", [Black " and [Result "; a game is collected when all
    three were seen."""
    out, cur = [], {}
    for line in text.splitlines():
        for key in ("White", "Black", "Result"):
            i = line.find(f'[{key} "')
            if i >= 0:
                j = line.find('"]', i)
                assert j >= 0, line
                cur[key] = line[i + len(key) + 3:j]
        if len(cur) == 3:
            assert cur["Result"] in ("1-0", "0-1", "1/2-1/2")
            out.append((cur["White"], cur["Black"], cur["Result"]))
            cur = {}
    return out


def check_pgn(out_dir):
    """tournament.pgn holds every game of results.jsonl: first mover as White, same result, same moves."""
    from gomoku_ai.board import parse_move
    text = (Path(out_dir) / "tournament.pgn").read_text()
    assert text.startswith(";") and "first" in text.splitlines()[1].lower()
    games = read_pgn(text)
    recs = sorted(results(out_dir), key=lambda r: r["game"])
    assert len(games) == len(recs) > 0
    for g, r in zip(games, recs):
        t = g["tags"]
        assert g["order"][:7] == ["Event", "Site", "Date", "Round", "White", "Black", "Result"]
        assert re.fullmatch(r"\d{4}\.\d\d\.\d\d", t["Date"])
        assert int(t["GameId"]) == r["game"] and int(t["Round"]) == r["round"] + 1
        assert (t["White"], t["Black"]) == (r["black"], r["white"])  # PGN White = our Black (first mover)
        assert t["Result"] == r["result"] == g["termination"]
        assert int(t["PlyCount"]) == len(r["moves"])
        moves_text = g["comment"].split(";")[0].split()
        assert [list(parse_move(m)) for m in moves_text] == r["moves"]
    assert ordo_scan(text) == [(r["black"], r["white"], r["result"]) for r in recs]
    return games


# ------------------------------------------------------------------------------------------ specs
def test_player_specs():
    ps = parse_players(["pure:400", "tactics", "heuristic:2s", "name=h2s", "random",
                        "model:models/x.json:800", "cmd=python engine.py --log x.log", "name=ours", "nodes=200",
                        "option.max_memory=1000", "threads=2", "tc=0/1", "env.FOO=1", "restart=game",
                        "board=always"])
    assert [p.kind for p in ps] == ["pure", "tactics", "heuristic", "random", "model", "external"]
    assert ps[0].visits == 400 and ps[0].name == "pure:400"
    assert ps[1].visits is None
    assert ps[2].movetime_ms == 2000 and ps[2].name == "h2s"
    assert ps[4].model == "models/x.json" and ps[4].visits == 800
    e = ps[5]
    assert e.cmd == ["python", "engine.py", "--log", "x.log"] and e.name == "ours" and e.nodes == 200
    assert e.infos == [("max_memory", "1000")] and e.threads == 2 and e.tc == TimeControl(0, 1000, 0)
    assert e.env == {"FOO": "1"} and e.restart == "game" and e.board_always
    assert split_player_tokens(["a", "x=1", "cmd=b c", "y=2", "d"]) == [["a", "x=1"], ["cmd=b c", "y=2"], ["d"]]
    # duplicate names become unique; the cmd name defaults to the file name
    ps = parse_players(["random", "random", "cmd=./pbrain-foo.exe", "cmd=python3 -u /x/engine.py --log a.log"])
    assert [p.name for p in ps] == ["random", "random#2", "pbrain-foo", "engine"]
    for bad in (["nope:5"], ["pure:abc"], ["random:5"], ["pure", "bogus=1"], ["pure", "nodes=5"],
                ["cmd="], ["cmd=x", "restart=never"], ["heuristic:0"], ["model:"]):
        with pytest.raises(SpecError):
            parse_players(bad)


# ------------------------------------------------------------------------------------------ schedule
def test_schedule_pairs_colours_openings_and_symmetries():
    book = [[(7, 7), (8, 7), (8, 9)], [(7, 7), (8, 8), (7, 10)]]
    s = build_schedule(3, "roundrobin", 6, 15, 15, Rule.FREESTYLE, seed=7, openings_kind="file", book=book,
                       transform=True)
    assert len(s) == 3 * 6 and [g.game for g in s] == list(range(18))
    for a, b in zip(s[0::2], s[1::2]):  # a pair: same opening, colours swapped
        assert a.pair == b.pair and a.opening == b.opening and (a.black, a.white) == (b.white, b.black)
    # pair k uses the same opening in every pairing; the second pass through the book is transformed
    for k in range(3):
        ops = {tuple(g.opening) for g in s if g.round == k}
        assert len(ops) == 1
    assert s[0].opening_index == 0 and s[0].transform == 0
    third = [g for g in s if g.round == 2][0]
    assert third.opening_index == 0 and third.transform == 1
    assert third.opening == [transform_point(x, y, 15, 15, 1) for x, y in book[0]]
    # every player has both colours equally often
    for p in range(3):
        assert sum(g.black == p for g in s) == sum(g.white == p for g in s)
    # deterministic, and a longer run extends the same schedule (resume with a larger --games)
    s2 = build_schedule(3, "roundrobin", 10, 15, 15, Rule.FREESTYLE, seed=7, openings_kind="file", book=book,
                        transform=True)
    assert [g.to_dict() for g in s2[:18]] == [g.to_dict() for g in s]
    r1 = build_schedule(2, "match", 8, 15, 15, Rule.FREESTYLE, seed=3, openings_kind="random", random_stones=3)
    r2 = build_schedule(2, "match", 8, 15, 15, Rule.FREESTYLE, seed=3, openings_kind="random", random_stones=3)
    assert [g.to_dict() for g in r1] == [g.to_dict() for g in r2]
    assert len({tuple(g.opening) for g in r1}) == 4 and all(len(g.opening) == 3 for g in r1)
    gs = build_schedule(4, "gauntlet", 2, 15, 15, Rule.FREESTYLE, seed=1)
    assert {(min(g.black, g.white), max(g.black, g.white)) for g in gs} == {(0, 1), (0, 2), (0, 3)}
    # the 8 symmetries of a square board are distinct
    assert len({transform_point(1, 2, 15, 15, t) for t in range(8)}) == 8


# ------------------------------------------------------------------------------------------ runs
def test_round_robin_in_process(tmp_path, capsys):
    out = tmp_path / "rr"
    code, text = run_cli(["tactics:50", "pure:50", "heuristic:50", "--games", 2, "--out", out, "--seed", 11,
                          "-j", 1, "--records", "sgf,psq", "--draw-after", 120], capsys)
    assert code == 0, text
    recs = results(out)
    assert sorted(r["game"] for r in recs) == list(range(6))
    assert all(r["offender"] is None for r in recs)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["games_played"] == 6 and len(summary["rating"]["elo"]) == 3
    assert abs(sum(summary["rating"]["elo"])) < 1e-6  # pool mean 0
    assert sum(p["games"] for p in summary["players"]) == 12
    txt = (out / "summary.txt").read_text()
    assert "Crosstable" in txt and "Ratings" in txt and "heuristic:50" in txt
    cfg = json.loads((out / "tournament.json").read_text())
    assert cfg["seed"] == 11 and cfg["format"] == "roundrobin"
    for r in recs:
        base = f"{r['game']:06d}-"
        sgf = [p for p in (out / "games").iterdir() if p.name.startswith(base) and p.suffix == ".sgf"]
        assert len(sgf) == 1
        rec = read_sgf(sgf[0])
        assert [list(m) for m in rec.moves] == r["moves"] and rec.black == r["black"]
        assert rec.result is not None and rec.result.score() == r["result"]
        psq = read_psq(sgf[0].with_suffix(".psq"))
        assert [list(m) for m in psq.moves] == r["moves"]
    check_pgn(out)


def test_resume_after_a_torn_results_line(tmp_path, capsys):
    out = tmp_path / "resume"
    args = ["heuristic:20", "pure:20", "random", "--games", 2, "--out", out, "--seed", 5, "-j", 1,
            "--draw-after", 60]
    code, _ = run_cli(args, capsys)
    assert code == 0
    path = out / "results.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    assert len(lines) == 6
    # without --resume a folder that is not empty is refused
    code = T.main([str(a) for a in args])
    err = capsys.readouterr().err
    assert code == 2 and "use --resume to continue, or choose a new folder" in err
    args = args + ["--resume"]
    # simulate an interruption: 3 finished games and half of the 4th line
    path.write_bytes(b"".join(lines[:3]) + lines[3][: len(lines[3]) // 2])
    code, text = run_cli(args, capsys)
    assert code == 0
    assert "torn last line" in text and "3 of 6 games already finished" in text
    assert finished_ids(text) == [3, 4, 5]  # finished games are not replayed
    new = path.read_bytes().splitlines(keepends=True)
    assert new[:3] == lines[:3] and len(new) == 6
    assert sorted(json.loads(x)["game"] for x in new) == list(range(6))
    # a finished run: nothing more to play
    code, text = run_cli(args, capsys)
    assert code == 0 and finished_ids(text) == []
    # more games extend the same schedule; changed settings are refused
    code, text = run_cli(args[:4] + [4] + args[5:], capsys)
    assert code == 0 and finished_ids(text) == [6, 7, 8, 9, 10, 11]
    code, _ = run_cli(["heuristic:20", "pure:30", "random", "--games", 2, "--out", out, "-j", 1, "--resume"],
                      capsys)
    assert code == 2
    code, _ = run_cli(args[:-3] + ["--draw-after", 50, "--resume"], capsys)
    assert code == 2
    check_pgn(out)
    # --resume on a folder that holds no tournament is refused; on a new folder it starts a run
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("x")
    code = T.main(["random", "random", "name=b", "--games", "2", "--out", str(other), "--resume"])
    assert code == 2 and "nothing to resume" in capsys.readouterr().err
    code = T.main(["random", "random", "name=b", "--games", "2", "--out", str(tmp_path / "new"), "--resume",
                   "--seed", "1"])
    assert code == 0 and len(results(tmp_path / "new")) == 2


def test_kill_mid_tournament_then_resume_equals_an_uninterrupted_run(tmp_path, capsys):
    """SIGKILL the runner (a subprocess) after a few games, resume with --resume: the final results and
    summary are exactly those of an uninterrupted run of the same seed (deterministic players)."""
    out = tmp_path / "killed"
    args = ["heuristic:30", "pure:30", "--games", 10, "--seed", 9, "-j", 1, "--draw-after", 80]
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    proc = subprocess.Popen([sys.executable, "-m", "tools.tournament", *map(str, args), "--out", str(out)],
                            cwd=str(ROOT), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    path = out / "results.jsonl"
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline:
            if path.exists() and path.read_bytes().count(b"\n") >= 3:
                break
            if proc.poll() is not None:
                break
            time.sleep(0.02)
        assert proc.poll() is None, f"the run ended early: {proc.stderr.read()[-2000:]!r}"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
    before = [json.loads(x) for x in path.read_bytes().split(b"\n") if x.strip()]
    assert 3 <= len(before) < 10
    code, text = run_cli(args + ["--out", out], capsys)
    assert code == 2 and finished_ids(text) == []  # not without --resume
    code, text = run_cli(args + ["--out", out, "--resume"], capsys)
    assert code == 0
    played = finished_ids(text)
    done = {r["game"] for r in before}
    assert not (set(played) & done), "a finished game was played again"
    recs = results(out)
    assert sorted(r["game"] for r in recs) == list(range(10))
    assert [r["game"] for r in recs[:len(before)]] == [r["game"] for r in before]
    # the same tournament without an interruption
    ref = tmp_path / "whole"
    code, _ = run_cli(args + ["--out", ref, "--quiet"], capsys)
    assert code == 0
    assert play_only(recs) == play_only(results(ref))
    s1, s2 = (json.loads((d / "summary.json").read_text()) for d in (out, ref))
    for key in ("games_played", "players", "crosstable", "terminations", "black_score"):
        assert s1[key] == s2[key], key
    for key in ("elo", "err", "first_move_elo", "los"):
        assert s1["rating"][key] == s2["rating"][key], key
    assert [p["penta"] for p in s1["pairings"]] == [p["penta"] for p in s2["pairings"]]
    def pgn_games(d):  # Site is the folder's name; Date may cross midnight
        return [({k: v for k, v in g["tags"].items() if k not in ("Site", "Date")}, g["comment"])
                for g in read_pgn((d / "tournament.pgn").read_text())]
    assert pgn_games(out) == pgn_games(ref)
    check_pgn(out)


def test_sprt_match_stops_when_decided(tmp_path, capsys):
    out = tmp_path / "sprt"
    code, text = run_cli(["heuristic:30", "random", "--sprt", "--elo0", 0, "--elo1", 200, "--games", 100,
                          "--out", out, "--seed", 3, "-j", 1], capsys)
    assert code == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["sprt"]["decision"] == "H1", s["sprt"]
    assert s["sprt"]["llr"] >= s["sprt"]["upper"]
    assert s["games_played"] < 60 and s["games_played"] % 2 == 0
    assert s["stop_reason"].startswith("SPRT: H1")
    assert "Score of heuristic:30 vs random" in text and "SPRT (logistic" in text
    from tools.tournament.live import footer_lines
    foot = footer_lines(s)
    assert any(x.startswith("SPRT [0, 200] LLR") and x.endswith("-> H1") for x in foot), foot
    assert any("penta" in x for x in foot)
    # rerunning a decided test plays nothing
    code, text = run_cli(["heuristic:30", "random", "--sprt", "--elo0", 0, "--elo1", 200, "--games", 100,
                          "--out", out, "-j", 1, "--resume"], capsys)
    assert code == 0 and finished_ids(text) == []


def test_sprt_on_parallel_workers_stops_where_the_sequential_run_stops(tmp_path, capsys):
    """Pairs finish out of order on two workers; the SPRT reads the contiguous prefix of finished pairs, so
    it decides at the same pair as the sequential run, on the same games (any later pair that finished is
    kept and counted in the standings, not in the test)."""
    args = ["tactics:30", "random", "--sprt", "--elo0", 0, "--elo1", 200, "--games", 100, "--seed", 4]
    code, _ = run_cli(args + ["--out", tmp_path / "seq", "-j", 1], capsys)
    assert code == 0
    code, text = run_cli(args + ["--out", tmp_path / "par", "-j", 2], capsys)
    assert code == 0
    seq = json.loads((tmp_path / "seq" / "summary.json").read_text())
    par = json.loads((tmp_path / "par" / "summary.json").read_text())
    assert seq["sprt"]["decision"] == "H1" and seq["sprt"]["pairs"] == seq["sprt"]["pairs_finished"]
    for k in ("decision", "pairs", "penta", "llr"):
        assert par["sprt"][k] == seq["sprt"][k], k
    assert par["stop_reason"] == seq["stop_reason"] == f"SPRT: H1 accepted after {seq['sprt']['pairs']} pairs " \
        f"({2 * seq['sprt']['pairs']} games)"
    def games(recs):
        return {r["game"]: {k: v for k, v in play_only([r])[0].items() if k != "worker"} for r in recs}
    first = games(r for r in results(tmp_path / "par") if r["pair"] < par["sprt"]["pairs"])
    assert first == games(results(tmp_path / "seq"))
    assert "pentanomial over the first" in text


def test_the_sprt_reads_the_contiguous_prefix_of_finished_pairs():
    """Pairs 0-2 and 4-9 complete, pair 3 half played (its second game still running on a worker): the SPRT
    counts pairs 0-2 only, exactly what a sequential run had seen at that point; the standings count all."""
    from tools.tournament.results import prefix_pairs, summarize
    recs = []
    for pair in range(10):
        for k, g in enumerate((2 * pair, 2 * pair + 1)):
            if pair == 3 and k == 1:
                continue
            a_black = k == 0
            # player 0 wins every game but the pair-1 ones (a draw and a loss)
            a_score = {1: (0.5, 0.0)}.get(pair, (1.0, 1.0))[k]
            result = {1.0: "1-0", 0.0: "0-1", 0.5: "1/2-1/2"}[a_score] if a_black else \
                {1.0: "0-1", 0.0: "1-0", 0.5: "1/2-1/2"}[a_score]
            recs.append({"game": g, "pair": pair, "black_index": 0 if a_black else 1,
                         "white_index": 1 if a_black else 0, "result": result, "termination": "five"})
    recs.reverse()                                     # finishing order does not matter
    assert prefix_pairs(recs, 0, 1) == [(1.0, 1.0), (0.5, 0.0), (1.0, 1.0)]
    assert prefix_pairs(recs, 1, 0) == [(0.0, 0.0), (0.5, 1.0), (0.0, 0.0)]
    cfg = {"elo0": 0, "elo1": 200, "alpha": 0.05, "beta": 0.05}
    s = summarize(recs, ["a", "b"], "match", [(0, 1)], 20, cfg)
    assert s["sprt"]["pairs"] == 3 and s["sprt"]["pairs_finished"] == 9 and s["games_played"] == 19
    first3 = [r for r in recs if r["pair"] < 3]
    s3 = summarize(first3, ["a", "b"], "match", [(0, 1)], 20, cfg)
    assert s3["sprt"]["llr"] == s["sprt"]["llr"] and s3["sprt"]["penta"] == s["sprt"]["penta"]
    assert s["pairings"][0]["penta"] == [0, 1, 0, 0, 8]          # the standings: every complete pair
    assert "over the first 3 pairs of 9 finished" in format_summary(s, "h")


def test_the_sprt_stops_at_the_first_pair_where_it_decides_even_when_the_prefix_jumps():
    """Eight won pairs then two lost ones: a sequential run accepts H1 after pair 8. On workers pair 7 may finish
    last, so the complete prefix goes from 7 pairs straight to 10, where the LLR is back inside the bounds; the
    SPRT still reports the decision at pair 8."""
    from tools.tournament.results import sequential_sprt
    cfg = {"elo0": 0, "elo1": 200, "alpha": 0.05, "beta": 0.05}
    recs = []
    for pair in range(10):
        won = pair < 8
        recs.append({"game": 2 * pair, "pair": pair, "black_index": 0, "white_index": 1,
                     "result": "1-0" if won else "0-1", "termination": "five"})
        recs.append({"game": 2 * pair + 1, "pair": pair, "black_index": 1, "white_index": 0,
                     "result": "0-1" if won else "1-0", "termination": "five"})
    all_ten = R.sprt([2, 0, 0, 0, 8], 0, 200, 0.05, 0.05)
    assert all_ten.decision is None                    # reading all ten pairs at once would go on
    res, counts, k = sequential_sprt(recs, 0, 1, cfg)
    assert (res.decision, k, counts) == ("H1", 8, [0, 0, 0, 0, 8])
    seven = [r for r in recs if r["pair"] < 7]
    assert sequential_sprt(seven, 0, 1, cfg)[0].decision is None


def test_a_runner_error_on_a_worker_stops_with_the_summary_and_keeps_finished_games(tmp_path, capsys,
                                                                                  monkeypatch):
    """A worker whose game raises (a runner bug, not a result): the games finished before it stay recorded,
    the run ends with exit code 2, a one-line message and the summary, and the traceback is in the log."""
    import gomoku_ai.workers as W
    from gomoku_ai.workers import TaskResult
    from tools.tournament.worker import GameRunner

    class OnePoolThatFails:
        def __init__(self, spec, n, **kw):
            self.runner = GameRunner(spec.kwargs["config"])

        def describe(self):
            return {"backend": "fake"}

        def run(self, tasks, stop=None):
            for t in tasks:
                if t.key == 3:
                    yield TaskResult(t.key, "error", error="Traceback ...\nZeroDivisionError: boom", worker="w-1")
                    return
                from tools.tournament.game import GameSpec
                yield TaskResult(t.key, "ok", value=self.runner.play(GameSpec.from_dict(t.payload)), worker="w-0")

        def close(self):
            self.runner.close()

    monkeypatch.setattr(W, "make_pool", OnePoolThatFails)
    out = tmp_path / "err"
    code = T.main(["random", "random", "name=b", "--games", "6", "--out", str(out), "-j", "2"])
    cap = capsys.readouterr()
    assert code == 2
    assert "game 3 failed on worker w-1: ZeroDivisionError: boom" in cap.err
    assert sorted(r["game"] for r in results(out)) == [0, 1, 2]
    assert json.loads((out / "summary.json").read_text())["games_played"] == 3
    assert "ZeroDivisionError: boom" in (out / "logs" / "runner.log").read_text()
    assert "Traceback" not in cap.err


def test_external_engines_and_a_crash_in_a_tournament(tmp_path, capsys):
    from tests.test_manager import FAKE
    fake = tmp_path / "fake.py"
    fake.write_text(FAKE)
    marker = tmp_path / "crashed.once"
    out = tmp_path / "ext"
    code, text = run_cli([f"cmd={sys.executable} {ENGINE}", "name=ours", "nodes=20",
                          f"cmd={sys.executable} {fake} crash {marker}", "name=crasher",
                          "random", "--games", 2, "--tc", "0/2", "--tolerance", 500, "--draw-after", 16,
                          "--out", out, "--seed", 2, "-j", 1], capsys)
    assert code == 0, text
    recs = results(out)
    assert len(recs) == 6
    crashes = [r for r in recs if r["termination"] == "crash"]
    assert len(crashes) == 1 and crashes[0]["offender"] in ("black", "white")
    loser = crashes[0]["black"] if crashes[0]["offender"] == "black" else crashes[0]["white"]
    assert loser == "crasher"
    others = [r for r in recs if r is not crashes[0]]
    assert all(r["offender"] is None for r in others), others  # the restarted crasher plays on
    s = json.loads((out / "summary.json").read_text())
    crasher = [p for p in s["players"] if p["name"] == "crasher"][0]
    assert crasher["failures"]["crash"] == 1
    assert "crash" in (out / "summary.txt").read_text()
    # the live table shows the crash next to the results
    row = [r for r in render_rows(s, [0, 0, 0]) if r[1] == "crasher"][0]
    assert row[10] == "1" and row[9] == "·"  # Crash, Time


def test_worker_processes(tmp_path, capsys):
    out = tmp_path / "pool"
    code, text = run_cli(["heuristic:20", "random", "--games", 4, "--out", out, "--seed", 4, "-j", 2,
                          "--draw-after", 40], capsys)
    assert code == 0, text
    recs = results(out)
    assert sorted(r["game"] for r in recs) == [0, 1, 2, 3]
    assert (out / "logs" / "worker-0.log").exists()


def test_stuck_in_process_search_loses_on_time():
    class Stuck:
        def think(self, board, limit, stop=None, on_info=None):
            time.sleep(3)

    from gomoku_ai.board import Board
    from protocol.manager import EngineTimeout
    p = InProcessPlayer(parse_player(["heuristic:10"]))
    cfg = GameConfig(tolerance_ms=100, move_timeout_ms=1000)
    p.new_game(cfg, TimeControl(), 1)
    p._player = Stuck()
    t0 = time.monotonic()
    with pytest.raises(EngineTimeout):
        p.move(Board(15), [], None, 100.0, TimeControl(0, 100, 0))
    assert time.monotonic() - t0 < 0.5


def test_bad_arguments_are_reported(tmp_path, capsys):
    code, _ = run_cli(["random", "--out", tmp_path / "x"], capsys)
    assert code == 2  # one player
    code, _ = run_cli(["random", "random", "random", "--sprt", "--out", tmp_path / "x"], capsys)
    assert code == 2
    code, _ = run_cli(["random", "random", "--tc", "abc", "--out", tmp_path / "x"], capsys)
    assert code == 2
    code, _ = run_cli(["random", "random", "--openings", tmp_path / "nope.txt", "--out", tmp_path / "x"], capsys)
    assert code == 2


@pytest.mark.skipif(not PISKVORK.is_file(), reason="shared opening file absent")
def test_opening_file_with_symmetries(tmp_path, capsys):
    out = tmp_path / "book"
    code, text = run_cli(["random", "random#b", "--games", 4, "--openings", PISKVORK, "--transform",
                          "--out", out, "--seed", 1, "-j", 1, "--draw-after", 12], capsys)
    # "random#b" is not a spec: the second player must be written "random name=b"
    assert code == 2
    code, text = run_cli(["random", "random", "name=b", "--games", 4, "--openings", PISKVORK, "--transform",
                          "--out", out, "--seed", 1, "-j", 1, "--draw-after", 12], capsys)
    assert code == 0, text
    assert "opening 41" in text or "skipped" in text  # one Piskvork opening does not fit 15x15
    recs = results(out)
    assert [r["opening"] for r in recs] == [0, 0, 1, 1]


@pytest.mark.parametrize("rule,size", [("renju", 15), ("standard", 20)])
def test_rules_and_board_sizes(tmp_path, capsys, rule, size):
    out = tmp_path / rule
    code, text = run_cli(["random", "heuristic:10", "--rule", rule, "--size", size, "--games", 2,
                          "--draw-after", 40, "--out", out, "--seed", 1, "-j", 1], capsys)
    assert code == 0, text
    recs = results(out)
    assert len(recs) == 2 and all(r["offender"] is None for r in recs)
    rec = read_sgf(next((out / "games").glob("000000-*.sgf")))
    assert rec.rule is Rule(rule) and rec.width == size and [list(m) for m in rec.moves] == recs[0]["moves"]


def test_gomoku_cli_has_the_tournament_subcommand(tmp_path, capsys):
    from tools import cli
    out = tmp_path / "cli"
    code = cli.main(["tournament", "random", "random", "name=r2", "--format", "gauntlet", "--games", "2",
                     "--out", str(out), "--seed", "1", "-j", "1", "--records", "none"])
    assert code == 0
    assert len(results(out)) == 2 and not any((out / "games").iterdir())
    assert json.loads((out / "tournament.json").read_text())["format"] == "gauntlet"


def render_rows(summary, left):
    """The live standings table as rows of cell strings."""
    from io import StringIO
    from rich.console import Console
    from tools.tournament.live import standings_table
    buf = StringIO()
    Console(file=buf, width=200, color_system=None).print(standings_table(summary, left))
    rows = []
    for line in buf.getvalue().splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]] if line.startswith("│") else None
        if cells:
            rows.append(cells)
    return rows


def test_live_table_and_progress_on_a_terminal(tmp_path, capsys, monkeypatch):
    import argparse
    from io import StringIO
    from rich.console import Console
    from tools.tournament.live import LiveDisplay
    buf = StringIO()

    def factory(total, done, title):
        return LiveDisplay(total, done, title, console=Console(file=buf, force_terminal=True, width=150,
                                                               color_system=None))

    p = argparse.ArgumentParser()
    T.configure_parser(p)
    a = p.parse_args(["random", "random", "name=b", "random", "name=c", "--games", "2", "--seed", "3", "-j", "1",
                      "--out", str(tmp_path / "live"), "--draw-after", "30"])
    lines = []
    r = T.Runner(T.build_config(a), a.out, echo=lines.append, live=factory)
    r.prepare()
    assert r.run() == 0
    screen = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", buf.getvalue())
    for word in ("Elo", "±95%", "LOS↓", "W-D-L", "Left", "Time", "Crash", "random", "games", "6/6"):
        assert word in screen, word
    assert len(re.findall(r"Finished game \d+ ", screen)) == 6  # printed above the live region
    assert not any(x.startswith("Finished game") for x in lines)
    assert any("Ratings (Bradley-Terry" in x for x in lines)  # the full summary after the live region
    rows = render_rows(r.summary(), r.games_left())
    assert sorted(row[1] for row in rows) == ["b", "c", "random"]
    assert all(row[8] == "0" for row in rows) and sum(int(row[5]) for row in rows) == 12  # Left, Games
    # gomoku tournament picks the live view only when stdout is a terminal (--no-live: plain lines)
    monkeypatch.setattr(T, "_stdout_is_tty", lambda: True)
    code, text = run_cli(["random", "random", "name=b", "--games", 2, "--seed", 1, "-j", 1,
                          "--out", tmp_path / "tty"], capsys)
    assert code == 0 and "LOS↓" in text
    code, text = run_cli(["random", "random", "name=b", "--games", 2, "--seed", 1, "-j", 1, "--no-live",
                          "--out", tmp_path / "plain"], capsys)
    assert code == 0 and "LOS↓" not in text and len(finished_ids(text)) == 2


def test_every_termination_survives_the_sgf_record(tmp_path):
    """Each termination (a protocol-error loss included), written to results.jsonl as its value, is
    written as TE[...] and read back."""
    from tools.tournament.runner import record_of
    from gomoku_ai.records import write_sgf
    from gomoku_ai.rules import Termination
    cfg = {"width": 15, "height": 15, "rule": "freestyle", "tc": "0/1", "format": "gauntlet"}
    for term in Termination:
        name = term.value
        res = {"game": 3, "pair": 1, "result": "0-1", "winner": "white", "termination": name, "reason": "r",
               "offender": "black", "rejected_move": None, "opening": None, "moves": [[7, 7], [8, 8]],
               "times_ms": [10, 12], "black": "a", "white": "b", "comments": {}}
        path = tmp_path / f"{name}.sgf"
        path.write_text(write_sgf(record_of(res, cfg)), encoding="utf-8")
        assert read_sgf(path).result.termination is term, name


# ------------------------------------------------------------------------------------------ first contact
#: a pbrain engine that only starts: ABOUT, START on the sizes in argv[2] (else ERROR), END; argv[1]: a file that
#: gets every line it reads and "exit" when it leaves (argv[1] "-": no log; argv[3] "quit": exits before ABOUT)
PICKY = r'''
import sys
log = None if sys.argv[1] == "-" else open(sys.argv[1], "a")
sizes = {int(s) for s in sys.argv[2].split(",")}
if len(sys.argv) > 3 and sys.argv[3] == "quit":
    sys.exit(5)
for line in sys.stdin:
    line = line.strip()
    if log:
        log.write(line + "\n"); log.flush()
    word = line.split()[0].upper() if line else ""
    if word == "ABOUT":
        print('name="picky", version="1"', flush=True)
    elif word == "START":
        print("OK" if int(line.split()[1]) in sizes else "ERROR unsupported size", flush=True)
    elif word == "END":
        break
if log:
    log.write("exit\n"); log.flush()
'''


def _picky(tmp_path, *args):
    path = tmp_path / "picky.py"
    path.write_text(PICKY)
    return f"cmd={sys.executable} {path} " + " ".join(str(a) for a in args)


def _refused(tmp_path, capsys, players, *extra):
    """Run a tournament that must be refused before it writes anything: (stderr lines, the --out path)."""
    out = tmp_path / "refused"
    code = T.main([*players, "--games", "2", "-j", "1", "--move-timeout", "2", "--out", str(out),
                   *map(str, extra)])
    cap = capsys.readouterr()
    assert code == 2, cap
    assert "Finished game" not in cap.out
    assert not out.exists(), sorted(p.name for p in out.iterdir())
    lines = [x for x in cap.err.splitlines() if x.strip()]
    assert len(lines) == 1, cap.err
    return lines[0], out


@pytest.mark.parametrize("case", ["model", "missing", "not-executable", "exits", "size"])
def test_players_are_checked_before_anything_is_written(tmp_path, capsys, case):
    """A player that cannot be created (a model that is not there, an engine that cannot be run, exits before
    ABOUT, or refuses START at the tournament's size) stops the run before the first game: exit 2, one line
    naming the player and why, and no --out folder (it used to play every game as a crash forfeit)."""
    notes = tmp_path / "notes.txt"
    notes.write_text("not a program\n")
    notes.chmod(0o644)
    spec, name, why = {
        "model": ("model:/nope.json:100", "model:/nope.json:100", "cannot load /nope.json: "),
        "missing": ("cmd=/nonexistent/engine", "engine", "No such file or directory"),
        "not-executable": (f"cmd={notes}", "notes", "Permission denied"),
        "exits": (_picky(tmp_path, "-", 15, "quit"), "picky", "exited with code 5"),
        "size": (_picky(tmp_path, "-", 15), "picky", "to START 20 instead of OK"),
    }[case]
    line, _ = _refused(tmp_path, capsys, [spec, "heuristic:50"], "--size", 20 if case == "size" else 15)
    assert line.startswith(f"gomoku tournament: player {name!r}"), line
    assert why in line, line
    if spec.startswith("cmd="):
        assert spec in line, line  # the engine's spec beside its default name


def test_each_engine_is_started_once_at_the_board_size_and_ended_before_the_games(tmp_path):
    """The check starts each external engine once: ABOUT, START at the tournament's board size, END, and the
    process exits; nothing is written to --out."""
    import argparse
    from tools.tournament.preflight import check_players
    log = tmp_path / "engine.log"
    p = argparse.ArgumentParser()
    T.configure_parser(p)
    a = p.parse_args([_picky(tmp_path, log, 20), "random", "--size", "20", "--out", str(tmp_path / "x")])
    check_players(T.build_config(a))
    lines = log.read_text().splitlines()
    assert lines[:2] == ["ABOUT", "START 20"] and lines[-2:] == ["END", "exit"], lines
    assert all(x.startswith("INFO ") for x in lines[2:-2]), lines
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("bad", [["--size", "99"], ["--size", "4"], ["--openings", "GARBAGE"],
                                 ["--openings", "random:40", "--size", "5"]])
def test_bad_arguments_create_no_folder_so_the_corrected_command_runs(tmp_path, capsys, bad):
    """Arguments that cannot make a tournament (a board size outside 5..32, an opening file without a usable
    opening, openings that do not fit the board) are refused before --out is created, so the corrected
    command runs in the same folder (it used to be refused as "not empty (an earlier run?)")."""
    garbage = tmp_path / "garbage.txt"
    garbage.write_text("root:x:0:0:root:/root:/bin/bash\n")
    bad = [str(garbage) if x == "GARBAGE" else x for x in bad]
    players = ["random", "random", "name=b"]
    line, out = _refused(tmp_path, capsys, players, *bad)
    assert line.startswith("gomoku tournament: "), line
    code, _ = run_cli([*players, "--games", 2, "-j", 1, "--draw-after", 10, "--out", out], capsys)
    assert code == 0 and len(results(out)) == 2


def _records(scores):
    """Result lines of a match a (index 0) vs b in colour-swapped pairs; ``scores``: a's score in each game."""
    recs = []
    for g, sa in enumerate(scores):
        a_black = g % 2 == 0
        sb = sa if a_black else 1 - sa
        recs.append({"game": g, "pair": g // 2, "black_index": 0 if a_black else 1,
                     "white_index": 1 if a_black else 0, "termination": "five",
                     "result": {1.0: "1-0", 0.0: "0-1", 0.5: "1/2-1/2"}[sb]})
    return recs


@pytest.mark.parametrize("won", [True, False])
def test_a_perfect_score_reports_only_its_one_sided_bound(won):
    """4-0 (or 0-4): no variance, so no +/-, no interval, no point estimate at the score clamp (+/-1199.8) and
    no Bradley-Terry rating from the prior alone; only the exact one-sided bound, at the confidence it states
    (95 % one-sided: s^4 = 0.05, s = 0.473, Elo > -18.9; it used to solve s^4 = 0.025, a 97.5 % bound)."""
    from tools.tournament.live import footer_lines
    from tools.tournament.results import summarize
    s = summarize(_records([1.0 if won else 0.0] * 4), ["a", "b"], "match", [(0, 1)], 4)
    bound = R.elo_from_score(0.05 ** (1 / 4), eps=0.0)
    assert bound == pytest.approx(-18.87, abs=0.01)
    ps = s["pairings"][0]
    assert ps["perfect_bound"] == pytest.approx(bound if won else -bound)
    text = format_summary(s, "h")
    rel = f"{'>' if won else '<'} {bound if won else -bound:+.1f}"
    assert f"Elo {rel} (95 % one-sided" in text and f"Elo difference {rel} (95 % one-sided" in text, text
    for pretends in ("1199.8", "+/- -", "Elo +", "Elo -", "95 %: [", "LOS"):
        assert pretends not in text.replace(f"Elo {rel}", "").replace(f"difference {rel}", ""), (pretends, text)
    rating = [x for x in text.splitlines() if x.strip().startswith(("1  ", "2  "))]
    assert len(rating) == 2 and all(x.split()[2:4] == ["-", "-"] for x in rating), rating  # Elo, +/-
    assert "not estimable" in text
    assert s["rating"]["perfect"] == (["won", "lost"] if won else ["lost", "won"])
    foot = " ".join(footer_lines(s))
    assert f"Elo {rel} (95 % one-sided)" in foot and "1199.8" not in foot and "± -" not in foot, foot
    rows = render_rows(s, [0, 0])
    assert [(r[2], r[3], r[4]) for r in rows] == [("-", "-", "-")] * 2, rows  # Elo, ±95%, LOS


def test_w_d_l_in_one_order_everywhere():
    """3 wins, 2 draws, 1 loss read 3-2-1 (W-D-L) in the live table, its footer, the pairings and the match
    block (the pairings used to print W-L-D)."""
    from tools.tournament.live import footer_lines
    from tools.tournament.results import match_score_line, summarize
    s = summarize(_records([1.0, 1.0, 1.0, 0.5, 0.5, 0.0]), ["a", "b"], "match", [(0, 1)], 6)
    text = format_summary(s, "h")
    pairing = [x for x in text.splitlines() if x.startswith("  a vs b: ")]
    assert len(pairing) == 1 and pairing[0].startswith("  a vs b: 3 - 2 - 1 (W-D-L)"), pairing
    assert "Score of a vs b: 3 - 2 - 1 (W-D-L)" in text
    assert match_score_line("a", "b", s["pairings"][0]).startswith("Score of a vs b: 3 - 2 - 1 (W-D-L)")
    assert footer_lines(s)[1].startswith("3 - 2 - 1 (W-D-L)"), footer_lines(s)
    row = [r for r in render_rows(s, [0, 0]) if r[1] == "a"][0]
    assert row[6] == "3-2-1"
    assert "W-L-D" not in text + " ".join(footer_lines(s))


def test_resume_with_a_changed_player_spec_says_so(tmp_path, capsys):
    """A resume whose in-process player changed (pure:30 -> pure:20) is refused with one message that names
    the change, not a warning that the player's files changed (pure has none) and old and new results are
    mixed; an engine whose program file changed still gets that warning, and plays on."""
    out = tmp_path / "spec"
    base = ["random", "--games", 2, "-j", 1, "--draw-after", 10, "--out", out]
    code, _ = run_cli(["pure:30", *base], capsys)
    assert code == 0
    code = T.main([str(a) for a in ["pure:20", *base, "--resume"]])
    cap = capsys.readouterr()
    assert code == 2
    assert "files of" not in cap.out + cap.err and "mixed" not in cap.out + cap.err, cap
    assert "spec changed from 'pure:30' to 'pure:20'" in cap.err and "the same players" in cap.err, cap.err
    # a changed engine file: a warning, and the resumed run goes on
    from tests.test_manager import FAKE
    fake = tmp_path / "fake.py"
    fake.write_text(FAKE)
    out2 = tmp_path / "files"
    args = [f"cmd={sys.executable} {fake}", "name=fake", "random", "--draw-after", 10, "-j", 1, "--out", out2]
    code, _ = run_cli([*args, "--games", 2], capsys)
    assert code == 0
    fake.write_text(FAKE + "\n# changed\n")
    code, text = run_cli([*args, "--games", 4, "--resume"], capsys)
    assert code == 0 and "the files of fake changed" in text and len(results(out2)) == 4, text


def test_resume_with_a_corrupt_tournament_json_is_refused_and_keeps_the_results(tmp_path, capsys):
    """A resumed folder whose tournament.json cannot be read is refused with a message that names the file
    and says what to do; the finished games stay as they were."""
    out = tmp_path / "corrupt"
    base = ["pure:20", "random", "--games", 2, "-j", 1, "--draw-after", 10, "--out", out]
    code, _ = run_cli(base, capsys)
    assert code == 0
    before = (out / "results.jsonl").read_bytes()
    (out / "tournament.json").write_text('{"games": 2, ')
    code = T.main([str(a) for a in [*base, "--resume"]])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{out / 'tournament.json'}: not a tournament configuration" in err and "use a new --out folder" in err, err
    assert (out / "results.jsonl").read_bytes() == before


def test_a_refused_player_is_one_line_from_the_command(tmp_path):
    """From the command line (no logging configured), an engine that refuses START is reported once: the
    engine client's warning is not printed beside the error."""
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    out = tmp_path / "x"
    p = subprocess.run([sys.executable, "-m", "tools.tournament", _picky(tmp_path, "-", 15), "random", "--size", "20",
                        "--out", str(out)], cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and not out.exists()
    assert p.stderr.splitlines() == [f"gomoku tournament: player 'picky' ({_picky(tmp_path, '-', 15)}): answered "
                                     "'ERROR unsupported size' to START 20 instead of OK"], p.stderr


def test_no_pgn_movetext_line_starts_with_a_semicolon() -> None:
    """BayesElo (and the reader above) takes a line that starts with ';' for a comment line; in a game's
    movetext that would drop the rest of the game, its result included. For every length of game, wherever
    the wrapping falls, the movetext reads back with its moves and result, and no line starts with ';'."""
    from tools.tournament.pgn import game_pgn
    for n in range(0, 120):
        moves = [[(3 * k) % 15, (7 * k) % 15] for k in range(n)]
        res = {"game": n, "round": 0, "black": "a", "white": "b", "result": "0-1", "termination": "five",
               "reason": "five in a row", "moves": moves, "started_at": 0}
        text = game_pgn(res, "e", "s")
        body = text.split("\n\n")[1]
        assert not any(line.startswith(";") for line in body.splitlines()), (n, body)
        (g,) = read_pgn(text)
        assert g["termination"] == "0-1" and len(g["comment"].split(";")[0].split()) == n


def test_ratings_do_not_depend_on_the_order_games_finish_in():
    """Workers finish games in any order (a pool, a resumed run); the same games must give the same
    ratings to the last bit, as the distributed-tournament tests compare them exactly."""
    import random
    from tools.tournament.results import summarize
    rng = random.Random(3)
    recs = []
    for g in range(60):
        b, w = rng.sample(range(3), 2)
        recs.append({"game": g, "pair": g // 2, "black_index": b, "white_index": w, "termination": "five",
                     "result": rng.choice(["1-0", "0-1", "1-0", "1/2-1/2"])})
    names, pairs = ["a", "b", "c"], [(0, 1), (0, 2), (1, 2)]
    ref = summarize(recs, names, "round-robin", pairs, 60)["rating"]
    assert ref["converged"] and len(set(ref["elo"])) == 3
    for _ in range(20):
        shuffled = rng.sample(recs, len(recs))
        r = summarize(shuffled, names, "round-robin", pairs, 60)["rating"]
        assert (r["elo"], r["se"]) == (ref["elo"], ref["se"])
