"""Put on PYTHONPATH by `hermes-plugins exec`: hands the process to the generation reader
(which acts only once Hermes imports its plugin loader), then runs the sitecustomize this one
shadows, if any."""

import os
import sys

import hermes_plugins_generation

hermes_plugins_generation.install()


def _chain():
    from importlib.machinery import PathFinder
    from importlib.util import module_from_spec

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        module = module_from_spec(spec)
        spec.loader.exec_module(module)


_chain()
del _chain
