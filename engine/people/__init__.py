"""Team mode's people: accounts, passwords, sign-in limits and sessions (``engine.people.people``), one-time links
to set a new password (``engine.people.links``), and who is acting now (``engine.people.acting``)."""

from __future__ import annotations

from engine.people.acting import PERSONAL, Viewer, acting, acting_as, for_nobody, set_acting
from engine.people.links import LINK_GONE, RESET_VALID, LinkGone, ResetLinks
from engine.people.passwords import password_problem
from engine.people.people import ABSOLUTE, WRONG, People, PeopleError, Person, SignedIn, session_key

__all__ = [
    "ABSOLUTE",
    "LINK_GONE",
    "PERSONAL",
    "RESET_VALID",
    "WRONG",
    "LinkGone",
    "People",
    "PeopleError",
    "Person",
    "ResetLinks",
    "SignedIn",
    "Viewer",
    "acting",
    "acting_as",
    "for_nobody",
    "password_problem",
    "session_key",
    "set_acting",
]
