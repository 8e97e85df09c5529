"""Every error the ledger raises, under one root.

Callers catch ``LedgerError`` to handle anything the ledger refuses; the subclasses say why.

    LedgerError
     ├── CodecError                  an event dict that cannot be decoded (unknown kind, missing or bad field)
     ├── StoreError                  the store could not do what was asked
     │    ├── ConversationDeletedError   a write for a conversation that was deleted
     │    ├── UnknownConversationError   a read or write for a conversation the store never saw
     │    ├── DataDirInUseError          another process holds the data folder's lock (one writer per folder)
     │    ├── DatabaseUnavailableError   the PostgreSQL server cannot be reached or refuses the login
     │    └── ConversationBusyError      another instance holds the conversation's write lease (PostgreSQL)
     └── StateError                  an operation that the current state does not allow
"""

from __future__ import annotations


class LedgerError(Exception):
    """Root of every error raised by the ledger package."""


class CodecError(LedgerError):
    """A dict is not a valid event: the message names the kind and the field."""


class StoreError(LedgerError):
    """The store refused or failed an operation."""


class ConversationDeletedError(StoreError):
    """A write was attempted for a conversation that has been deleted; nothing was written."""

    def __init__(self, conversation_id: str) -> None:
        super().__init__(f"conversation {conversation_id} was deleted; nothing may be written to it")
        self.conversation_id = conversation_id


class UnknownConversationError(StoreError):
    """The conversation does not exist in the store."""

    def __init__(self, conversation_id: str) -> None:
        super().__init__(f"no conversation {conversation_id}")
        self.conversation_id = conversation_id


class DataDirInUseError(StoreError):
    """Another process holds the data folder's lock; nothing was read or written. ``pid`` names it when known."""

    def __init__(self, folder: object, pid: int | None) -> None:
        holder = f"process {pid}" if pid is not None else "a process whose id could not be read"
        super().__init__(
            f"the data folder {folder} is in use by another Ledger Chat ({holder}); "
            "stop that one first or choose another --data-dir"
        )
        self.pid = pid


class DatabaseUnavailableError(StoreError):
    """The database cannot be reached or refuses the login; ``where`` is its URL without the password."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"cannot open the ledger database {where}: {reason}")
        self.where = where


class ConversationBusyError(StoreError):
    """Another app instance is writing this conversation right now (it holds its write lease); nothing was
    written. ``writer`` names that instance."""

    def __init__(self, conversation_id: str, writer: str | None) -> None:
        super().__init__(
            f"conversation {conversation_id} is being written by another instance ({writer or 'unknown'}); "
            "try again in a moment"
        )
        self.conversation_id = conversation_id
        self.writer = writer


class StateError(LedgerError):
    """The requested operation does not fit the current state (for example a Retry while streaming)."""
