"""hermes-plugins inside Hermes: reads the current generation and makes an unmodified Hermes
Agent load it.

Standard library only (Python 3.8+). Modules:

* ``reader`` — the reference reader of docs/generations.md (also the wheel's
  ``hermes_plugins.generation``): :func:`acquire` a generation with its lease,
  :func:`read_plan` of a profile.
* ``hook`` — :func:`install` (``hermes-plugins exec``'s ``sitecustomize``) and
  :func:`activate` (the ``.pth`` line ``hermes-plugins activate`` writes): a meta-path finder
  that patches Hermes's plugin modules as they are imported.
* ``loader``, ``providers``, ``capabilities`` — the patches of Hermes's loaders, for every
  release from 0.13 on, each told apart by what its modules have (docs/integration.md).
* ``routing``, ``listing`` — ``hermes plugins …`` served by the hermes-plugins binary.
* ``hermes`` — the running Hermes's release, and refusing one whose loaders moved.

Importing the package imports ``reader`` and ``hook`` only: it runs at every start of an
activated interpreter.
"""

from .hook import activate, install
from .reader import (
    FORMAT,
    GenerationError,
    Plan,
    acquire,
    current,
    env_file_names,
    home_of,
    lease,
    read_plan,
)

__all__ = [
    "FORMAT",
    "GenerationError",
    "Plan",
    "acquire",
    "activate",
    "current",
    "env_file_names",
    "home_of",
    "install",
    "lease",
    "read_plan",
]
