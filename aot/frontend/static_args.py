"""Arguments that must be known when tracing (repeat counts, split points, bin counts and edges):
numpy arrays and scalars that the traced code closes over are concrete data, although the capture
tracer treats closed-over arrays as values (they become lifted graph inputs)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .emitter import Emitter


def is_traced(em: Emitter, x: Any) -> bool:
    """Whether x is a value only known when the compiled code runs."""
    return em.is_value(x) and not isinstance(x, (np.ndarray, np.generic))
