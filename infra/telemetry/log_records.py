"""Log records as plain text (the default) or, with TRAINPLATE_LOG_FORMAT=json, one JSON object
a line naming the trace, the span and the request each record was written in. A record holds
what the code wrote: no secret is logged anywhere (tests/api/test_secret_leaks.py)."""

import logging
import sys
from collections.abc import Callable
from contextvars import ContextVar
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Final

import msgspec
from opentelemetry import trace

TEXT_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s: %(message)s"
REQUEST_ID: Final[ContextVar[str | None]] = ContextVar("trainplate_request_id", default=None)
_encoder: Final = msgspec.json.Encoder()


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message, the process's role, and the
    trace, span and request ids when the record was written inside them."""

    def __init__(self, process: str = "") -> None:
        super().__init__()
        self._process = process

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if self._process:
            entry["process"] = self._process
        found = trace.get_current_span().get_span_context()
        if found.is_valid:
            entry["trace_id"] = f"{found.trace_id:032x}"
            entry["span_id"] = f"{found.span_id:016x}"
        if (request_id := REQUEST_ID.get()) is not None:
            entry["request_id"] = request_id
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return _encoder.encode(entry).decode()


def configure_logging(level: str, log_format: str, *, process: str = "") -> None:
    """The root logger's one handler, on standard error. JSON: Python's warnings and uncaught
    exceptions become records too, so every line the process writes parses."""
    handler = logging.StreamHandler(sys.stderr)
    if log_format == "json":
        handler.setFormatter(JsonFormatter(process))
        logging.captureWarnings(True)
        sys.excepthook = _logged(logging.getLogger(process or "trainplate"))
    else:
        handler.setFormatter(logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())


def _logged(
    logger: logging.Logger,
) -> Callable[[type[BaseException], BaseException, TracebackType | None], None]:
    def hook(kind: type[BaseException], error: BaseException, tb: TracebackType | None) -> None:
        logger.critical("uncaught %s", kind.__name__, exc_info=(kind, error, tb))

    return hook
