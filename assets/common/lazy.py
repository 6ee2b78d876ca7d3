"""Calling report code without importing it with the code location.

Every run process loads the code location; report code (scipy, statsmodels) is needed only
where a report is made, so the chain gets functions that import it on first call.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable


def lazy(module: str, name: str) -> Callable[..., Any]:
    def call(*args, **kwargs):
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    call.__name__ = name
    return call
