"""The numpy front end: numpy calls on abstract tensors -> core ops, through an Emitter.

    from aot.frontend import EagerEmitter, translate
    translate(EagerEmitter(), np.sum, x, axis=-1, keepdims=True)

`translate` (functions and ufuncs), `translate_operator`, `translate_method`/`translate_attribute` and
`getitem` cover what a tracer intercepts; `StagedArray`/`lower_numpy` stage plain numpy code through
them; `nn_functional` holds aot.nn.functional's translations.
"""
from __future__ import annotations

import aot.ops  # noqa: F401  (the core op rows the translations emit)

from .core import CoreOp, ops
from .emitter import Abstract, EagerEmitter, Emitter, IRBuilderEmitter, abstract_of, build_func
from .assignment import setitem
from .indexing import getitem
from .methods import translate_attribute, translate_method, translate_operator
from .numpy_api import TRANSLATIONS, is_supported, lookup_translation, translate
from .operands import FrontendError, UnsupportedError
from .staged import StagedArray, lower_numpy

__all__ = [
    "Abstract", "CoreOp", "EagerEmitter", "Emitter", "FrontendError", "IRBuilderEmitter", "TRANSLATIONS",
    "UnsupportedError", "abstract_of", "build_func", "getitem", "is_supported", "lookup_translation", "ops",
    "setitem", "StagedArray", "lower_numpy", "translate", "translate_attribute", "translate_method",
    "translate_operator",
]
