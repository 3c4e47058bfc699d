"""What stops a request's work on the server: its client gone or replaced (Cancelled), the
server too busy for it (Busy).  One small module that the server and its live board both
read."""

from __future__ import annotations


class Cancelled(Exception):
    """The request's client has gone, or a newer request of its page replaced it."""


class Busy(Exception):
    """More requests wait than the server takes (HTTP 503)."""
