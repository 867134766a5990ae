"""The request and response bodies of ``gomoku serve``, declared once (pydantic models).

The request models *are* the validation of a body's shape and types (strict: ``true`` is not 1 and
``"100"`` is not a number); :mod:`tools.serve.request` turns a model's errors into the service's
``{"error": code, ...}`` answers and checks what a schema cannot say (a rectangular board, stone
counts, legality). The response models are what ``/openapi.json`` publishes; the tests check real
answers against them (``extra="forbid"``), so the documentation cannot drift from the service.

Coordinates: ``x`` is the column (0 = left), ``y`` the row (0 = top); a move name such as ``"h8"``
is the column letter and the row counted from the top, 1-based (``h8`` is x 7, y 7).
"""
from __future__ import annotations

from typing import Annotated, Dict, List, Literal, Optional, Tuple, Union

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, StrictStr

from gomoku_ai.board import MAX_SIZE, MIN_SIZE

MAX_TOP = 25

Cell = Annotated[StrictInt, Field(ge=0, le=2, description="0 empty, 1 black, 2 white")]
Side = Annotated[StrictInt, Field(ge=MIN_SIZE, le=MAX_SIZE)]
MoveName = Annotated[StrictStr, Field(max_length=16, examples=["h8", "7,7"])]
MovePair = Tuple[StrictInt, StrictInt]
MoveItem = Union[MoveName, MovePair]
RuleField = Union[Annotated[StrictStr, Field(max_length=32)], Annotated[StrictInt, Field(ge=0)]]
Visits = Annotated[StrictInt, Field(ge=1, description="simulations; clamped to --max-visits")]
TimeMs = Annotated[Union[StrictInt, Annotated[StrictFloat, Field(allow_inf_nan=False)]],
                   Field(gt=0, description="search time in ms; clamped to --max-time-ms")]
Color = Literal["black", "white"]

VISITS_DOC = "simulations (the first limit reached stops the search); clamped to --max-visits"
TIME_DOC = "search time in ms (the first limit reached stops the search); clamped to --max-time-ms"
RULE_DOC = ('"freestyle" (default), "standard", "renju", "caro", or a Gomocup INFO rule code (an '
            'integer >= 0 such as 4, or the same as a string, "4")')


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ------------------------------------------------------------------------------------ requests
class PositionRequest(_Strict):
    """A position: exactly one of board or moves."""

    board: Optional[Annotated[List[Annotated[List[Cell], Field(min_length=MIN_SIZE,
                                                                max_length=MAX_SIZE)]],
                              Field(min_length=MIN_SIZE, max_length=MAX_SIZE)]] = Field(
        None, description="board[y][x], top row first, rectangular, sides 5 to 32")
    moves: Optional[Annotated[List[MoveItem], Field(max_length=MAX_SIZE * MAX_SIZE)]] = Field(
        None, description='the moves so far, Black first: "h8", "7,7" or [7, 7]',
        examples=[["h8", "i9"]])
    size: Optional[Union[Side, Tuple[Side, Side]]] = Field(
        None, description="board size for moves: an integer or [width, height] (default 15)")
    side_to_move: Optional[Union[Annotated[StrictStr, Field(max_length=16)], StrictInt]] = Field(
        None, description='"black" or "white" (or 1 / 2); must agree with the stones')
    rule: RuleField = Field("freestyle", description=RULE_DOC)
    top: Annotated[StrictInt, Field(ge=0, le=MAX_TOP)] = Field(
        5, description="how many candidate moves to list")


class MoveRequest(PositionRequest):
    """POST /move: a position and the search's limits (the first reached stops it; neither given:
    800 visits)."""

    visits: Optional[Visits] = Field(None, description=VISITS_DOC)
    time_ms: Optional[TimeMs] = Field(None, description=TIME_DOC)


class AnalyzeRequest(PositionRequest):
    """POST /analyze: a position (no limits: the network is asked once)."""


class NewGameRequest(_Strict):
    """POST /games: a browser game against the engine."""

    size: Annotated[StrictInt, Field(ge=MIN_SIZE, le=MAX_SIZE)] = 15
    rule: RuleField = Field("freestyle", description=RULE_DOC)
    you: Color = Field("black", description="your colour; as white, the engine opens")
    visits: Optional[Visits] = Field(None, description=VISITS_DOC)
    time_ms: Optional[TimeMs] = Field(None, description=TIME_DOC)


class GameMoveRequest(_Strict):
    """POST /games/{id}/move: your move; the engine answers within the limits."""

    move: MoveItem = Field(description='"h8", "7,7" or [x, y]')
    visits: Optional[Visits] = Field(None, description=VISITS_DOC)
    time_ms: Optional[TimeMs] = Field(None, description=TIME_DOC)


# ----------------------------------------------------------------------------------- responses
class Square(_Strict):
    x: int
    y: int
    move: str


class Candidate(Square):
    probability: float = Field(description="share of the root visits (a prior for a policy "
                                           "answer)")
    visits: int
    q: float = Field(description="mean value for the side to move, -1..1")
    prior: Optional[float]


class LimitsOut(_Strict):
    visits: int
    time_ms: float
    clamped: List[str] = Field(description="which asked limits were over the server's caps")


class ModelInfo(_Strict):
    name: str
    version: str
    sha256: Optional[Dict[str, str]]
    backend: Optional[str]


class MoveAnswer(Square):
    """The engine's move for the side to move."""

    value: float = Field(description="-1..1 for the side to move")
    winrate: float = Field(description="0..1 for the side to move")
    source: str = Field(description='"mcts"; a tactic ("win1", "block5", "vcf", "vct", "lost"); '
                                    'or "policy" (the network alone, no search)')
    proven: int = Field(description="1 a proven win, -1 a proven loss, 0 unknown")
    candidates: List[Candidate]
    pv: List[Square] = Field(description="principal variation, the answer first")
    visits: int
    elapsed_ms: float
    limits: LimitsOut
    side_to_move: Color
    rule: str
    model: ModelInfo
    engine_version: str


class AnalyzeAnswer(_Strict):
    policy: List[List[float]] = Field(description="policy[y][x]: the prior over the legal squares "
                                                  "(renju-forbidden points 0), summing to 1")
    value: float
    winrate: float
    top: List[Dict[str, Union[int, float, str]]]
    forbidden: List[str] = Field(description="renju points forbidden to the side to move")
    side_to_move: Color
    rule: str
    width: int
    height: int
    model: ModelInfo
    engine_version: str


class HealthLimits(_Strict):
    max_visits: int
    max_time_ms: float
    workers: int
    queue: int
    max_body_bytes: int
    max_games: int
    game_idle_s: float
    max_trees: int


class Health(_Strict):
    status: Literal["ok"]
    engine: str
    engine_version: str
    model: ModelInfo
    models: Dict[str, ModelInfo]
    limits: HealthLimits
    busy: int = Field(description="searches running or queued")
    games: int = Field(description="browser games open")


class ErrorBody(_Strict):
    """Every error: a machine-readable code, a sentence, and the HTTP status again."""

    error: str
    message: str
    status: int


class PlayedMove(Square):
    color: Color


class ForbiddenPoint(Square):
    kind: str = Field(description='"overline", "double-four" or "double-three"')


class Point(_Strict):
    x: int
    y: int


class GameState(_Strict):
    """A browser game as it stands."""

    id: str
    width: int
    height: int
    rule: str
    you: Color
    moves: List[PlayedMove]
    to_move: Color
    status: Literal["playing", "black_won", "white_won", "draw"]
    winning_line: List[Point]
    forbidden: List[ForbiddenPoint] = Field(description="renju, Black to move: the points Black "
                                                        "may not play")
    engine: Optional[MoveAnswer] = Field(description="the engine's last reply (its value and win "
                                                     "rate are the engine's)")
    expires_in_s: float = Field(description="the game is dropped after this long without a "
                                            "request")
