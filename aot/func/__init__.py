"""aot.func: torch.func's composable transforms for numpy functions.

grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd, hessian and vmap are graph transforms
on the captured graph: each op's vjp, jvp and batching rules live with its row (aot/ops). Called on
numpy arrays a transform runs eagerly (traced once per signature, then cached); inside aot.compile
or aot.export, or applied to an aot.compile'd function, forward and backward become one native
function.
"""
from ._api import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp, vmap
from ._module import functional_call, stack_module_state
from ._trace import TransformError

__all__ = [
           "TransformError",
           "functional_call",
           "grad",
           "grad_and_value",
           "hessian",
           "jacfwd",
           "jacrev",
           "jvp",
           "linearize",
           "stack_module_state",
           "vjp",
           "vmap",
]
