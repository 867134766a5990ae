"""The brain's player lifecycle: which player thinks, when it is (re)made, and whether it is free.

:class:`PlayerSlot` holds either a player given as it is, or a factory
(:data:`gomoku_ai.shipped.ThinkerFactory`): ``factory(rule, width, height)`` or ``factory(rule)``, called at the
first START (so that a model loads while START is handled, PROTOCOL.md P9) and again when the rule or the
board size changes what it would make (:func:`gomoku_ai.shipped.factory_key`; each rule and size may have its
own network). A factory that fails is not retried for that key: the brain then answers fallback moves.

``idle`` is set while no think call is running: a player whose search was abandoned (it overran) is never
called again, nor replaced, until that call has returned.
"""
from __future__ import annotations

import logging
import threading
from typing import Dict, Hashable, Optional, Tuple

from gomoku_ai.player import Thinker
from gomoku_ai.rules import Rule
from gomoku_ai.shipped import ThinkerFactory, factory_key, make_with, player_source, takes_size

from .game import Settings

log = logging.getLogger("pygomoku.brain")

_NO_PLAYER = object()  # the key before the factory made anything


class PlayerSlot:
    """The brain's player (see the module docstring): ``player`` as given, or made by ``factory``."""

    def __init__(self, player: Optional[Thinker], factory: Optional[ThinkerFactory]) -> None:
        self.player = player
        self._factory = factory
        self._sized = factory is not None and takes_size(factory)
        self._key: Hashable = _NO_PLAYER   # what the factory made the player for
        self._keys: Dict[Tuple[Rule, int, int], Hashable] = {}   # (rule, width, height) -> key, once each
        self.idle = threading.Event()
        self.idle.set()

    @property
    def made(self) -> bool:
        """Whether the factory has been asked for a player yet."""
        return self._key is not _NO_PLAYER

    def _factory_key(self, rule: Rule, w: int, h: int) -> Hashable:
        spec = (rule, w, h)
        if spec not in self._keys:
            assert self._factory is not None
            try:
                key = factory_key(self._factory, rule, w, h, self._sized)
            except Exception:  # noqa: BLE001 - the plain key then
                log.exception("player_factory.key failed")
                key = (rule, w, h) if self._sized else rule
            self._keys[spec] = key
        return self._keys[spec]

    def ensure(self, rule: Rule, w: int, h: int) -> Optional[Thinker]:
        """The player; (re)made by the factory when there is none yet, or when (rule, w, h) changed what the
        factory would make (a new network) and the player is idle. None when the factory failed."""
        if self._factory is None or not self.idle.is_set():
            return self.player
        key = self._factory_key(rule, w, h)
        if self._key is _NO_PLAYER or key != self._key:
            self._key = key
            old, self.player = self.player, None
            close = getattr(old, "close", None)
            if callable(close):     # e.g. its network's worker process
                try:
                    close()
                except Exception:  # noqa: BLE001
                    log.exception("closing the old player failed")
            try:
                self.player = make_with(self._factory, rule, w, h, self._sized)
                log.info("player for %s %dx%d: %s (%s)", rule.value, w, h, type(self.player).__name__,
                         player_source(self.player))
            except Exception:  # noqa: BLE001 - play on with fallback moves rather than forfeit
                log.exception("could not create the player; answering with fallback moves")
        return self.player

    def new_game(self, rule: Rule, w: int, h: int) -> None:
        """A new game (or YXHASHCLEAR): the player forgets its tree, if it is idle."""
        p = self.ensure(rule, w, h)
        if p is not None and self.idle.is_set():
            try:
                p.new_game()
            except Exception:  # noqa: BLE001
                log.exception("player.new_game failed")

    def after_rule_change(self, rule: Rule, w: int, h: int) -> None:
        """``INFO rule``: a network for the new rule loads now rather than during the move (once the factory
        has made a player at all)."""
        if self.made:
            self.ensure(rule, w, h)

    def settings_changed(self, settings: Settings) -> None:
        """``INFO thread_num`` / ``max_memory``: an existing, idle player is configured at once (a busy one
        is before its next search, as every player is)."""
        if self.player is not None and self.idle.is_set():
            self.configure(self.player, settings)

    @staticmethod
    def configure(player: Thinker, settings: Settings) -> None:
        """Give ``player`` the manager's memory limit (bytes) and thread count before a search."""
        for attr, value in (("memory_limit_bytes", settings.memory_limit_bytes),
                            ("thread_num", settings.thread_num)):
            try:
                setattr(player, attr, value)
            except Exception as e:  # noqa: BLE001 - a player without the attribute is fine
                log.debug("player has no settable %s: %s", attr, e)
