"""A PGN file of the finished games of a tournament, for external raters (BayesElo, Ordo).

``tournament.pgn`` is rebuilt from ``results.jsonl`` (every complete line) and written atomically at each
summary refresh and at the end of a run, so a reader never sees a half-written file. Games are in game-id
order. Each game has the seven standard tag pairs, in the standard order, then a few extra ones::

    [Event "gomoku tournament (roundrobin) freestyle 15x15 tc 0/1"]
    [Site "rr"]                        the output folder's name
    [Date "2025.01.31"]                UTC date the game started
    [Round "3"]                        opening pair index + 1 (both games of a pair share it)
    [White "heuristic:800"]            the FIRST player: Gomoku's Black (see below)
    [Black "pure:400"]                 the second player: Gomoku's White
    [Result "1-0"]                     1-0 first player won, 0-1 second player won, 1/2-1/2 draw
    [GameId "12"]                      the game id of results.jsonl
    [Termination "normal"]             normal, adjudication, time forfeit, abandoned (crash) or
                                       rules infraction (protocol error, illegal or forbidden move)
    [PlyCount "37"]                    stones on the board at the end, opening stones included

    {h8 i9 g7 ... ; five: five in a row} 1-0

**Colours.** PGN has White move first; in Gomoku Black moves first. The tags are mapped by *move order*, not by
colour name: PGN ``White`` is always our Black (the first mover) and PGN ``Black`` our White. ``results.jsonl``
uses the same convention for ``result`` ("1-0" = Black, the first mover, won), so the result string is copied
unchanged. BayesElo's ``advantage`` (White's advantage) is therefore the first-move advantage.

**Moves** are given only in the brace comment (a column letter and a 1-based row counted from the top, as
:func:`gomoku_ai.board.parse_move` reads them); the raters read only the tags and the game termination marker.

**Compatibility.** BayesElo skips ``;`` comment lines and reads the seven tags (extra tags are ignored); Ordo
scans each line for ``[White "``, ``[Black "`` and ``[Result "`` and does not unescape strings, so names are
written without ``"`` or ``\\`` (replaced by ``'`` and ``/``) and the header comment avoids those patterns.
"""
from __future__ import annotations

import os
import re
import time
from typing import Any, Dict, Iterable, List, Optional, Sequence

from gomoku_ai.board import square_name
from gomoku_ai.records import atomic_write_text
from gomoku_ai.rules import Termination

from ..textwrap_items import pack

RESULTS = ("1-0", "0-1", "1/2-1/2")
#: the PGN Termination tag of each way a game ends
_TERMINATION = {Termination.FIVE: "normal", Termination.BOARD_FULL: "normal",
                Termination.ADJUDICATION: "adjudication", Termination.TIME: "time forfeit",
                Termination.CRASH: "abandoned", Termination.PROTOCOL: "rules infraction",
                Termination.ILLEGAL: "rules infraction", Termination.FORBIDDEN: "rules infraction"}

HEADER = """\
; Gomoku tournament games for BayesElo / Ordo, rebuilt from results.jsonl (do not edit: it is rewritten).
; Colours: the PGN White tag names the FIRST player (Gomoku Black, who moves first), the PGN Black tag the
; second player (Gomoku White). Result 1-0: the first player won; 0-1: the second player won; 1/2-1/2: draw.
; A White advantage fitted by BayesElo is the first-move advantage.
; Moves are in the brace comment only: column letter + row number from the top (h8 is the centre of 15x15).
"""


def pgn_name(name: Any) -> str:
    """A player name safe for Ordo (no unescaping) and BayesElo: no quotes, backslashes or line breaks."""
    s = str(name).replace('"', "'").replace("\\", "/")
    return re.sub(r"[\r\n\t]+", " ", s).strip() or "?"


def move_text(x: int, y: int) -> str:
    """``h8`` for (7, 7) (:func:`gomoku_ai.board.square_name`; ``x,y`` past column z)."""
    return square_name(int(x), int(y))


def _comment_text(text: str) -> str:
    return (text.replace("{", "(").replace("}", ")").replace('"', "'").replace("\n", " ")
            .replace("\r", " "))


def _wrap(words: Sequence[str], width: int = 79) -> List[str]:
    return pack(words, width)


def _pgn_termination(value: Optional[str]) -> str:
    """The PGN tag of a results line's ``termination`` (a :class:`Termination` value); ``unterminated`` when it
    has none (or one the referee never ends a game with). ValueError for a value that is no termination."""
    if not value:
        return "unterminated"
    return _TERMINATION.get(Termination(value), "unterminated")


def game_pgn(res: Dict[str, Any], event: str, site: str) -> str:
    """One game (tags, a blank line, the comment and the result, a blank line)."""
    result = res["result"]
    if result not in RESULTS:
        raise ValueError(f"game {res.get('game')}: result {result!r} is not {', '.join(RESULTS)}")
    started = res.get("started_at")
    date = time.strftime("%Y.%m.%d", time.gmtime(float(started))) if started is not None else "????.??.??"
    tags = [("Event", event), ("Site", site), ("Date", date), ("Round", str(int(res.get("round", 0)) + 1)),
            ("White", pgn_name(res["black"])), ("Black", pgn_name(res["white"])), ("Result", result),
            ("GameId", str(res["game"])),
            ("Termination", _pgn_termination(res.get("termination"))),
            ("PlyCount", str(len(res.get("moves") or [])))]
    out = [f'[{k} "{pgn_name(v) if k not in ("White", "Black") else v}"]' for k, v in tags]
    how = str(res.get("termination", ""))
    if res.get("reason"):
        how += f": {res['reason']}"
    if res.get("offender"):
        how += f" ({res['offender']})"
    words = [move_text(x, y) for x, y in (res.get("moves") or [])]
    # the ";" stays on its move's line: a line that starts with ";" is a comment line to BayesElo (and to
    # simple readers), which would drop the rest of the game, its result included
    words = words[:-1] + [words[-1] + " ;"] if words else [";"]
    body = _wrap(["{"] + words + [_comment_text(how) + "}", result])
    # the wrapper splits "{ h8": join the opening brace to the first word for readability
    text = "\n".join(body).replace("{ ", "{", 1).replace("{\n", "{", 1)
    return "\n".join(out) + "\n\n" + text + "\n\n"


def format_pgn(records: Iterable[Dict[str, Any]], config: Dict[str, Any], site: str = "?") -> str:
    """The whole file: the header comment, then every game in game-id order."""
    event = (f"gomoku tournament ({config.get('format', '?')}) {config.get('rule', '?')} "
             f"{config.get('width', '?')}x{config.get('height', '?')} tc {config.get('tc', 'none')}")
    games = sorted(records, key=lambda r: r["game"])
    return HEADER + "\n" + "".join(game_pgn(r, event, pgn_name(site)) for r in games)


def write_pgn(path: str, records: Iterable[Dict[str, Any]], config: Dict[str, Any],
              site: Optional[str] = None) -> None:
    """Write :func:`format_pgn` to ``path`` atomically."""
    if site is None:
        site = os.path.basename(os.path.dirname(os.path.abspath(path))) or "?"
    atomic_write_text(path, format_pgn(records, config, site))
