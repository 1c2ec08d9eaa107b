"""The Hermes this process runs, as the patches need it: its release for messages, refusing a
Hermes whose loaders moved, and refusing a Hermes started with another home than the one
prepared for it."""

import os
import sys

from .reader import GenerationError


def version():
    """The running Hermes release, for messages ("unknown" when it cannot be told)."""
    try:
        # Hermes 0.22+: ``hermes_cli.__version__`` reads the install stamp (hermes_cli/__init__.py).
        return str(sys.modules["hermes_cli"].__version__)
    except Exception:
        pass
    try:
        from importlib.metadata import version as distribution_version

        return distribution_version("hermes-agent")
    except Exception:
        return "unknown"


def require(module, *names):
    """Raises unless ``module`` has every attribute of ``names``: a Hermes whose loader lacks
    one is a release the patches do not know, and starting it would load plugins the
    generation cannot pin."""
    missing = [n for n in names if not hasattr(module, n)]
    if missing:
        raise GenerationError(
            "hermes-plugins does not know Hermes %s (%s lacks %s): refusing to start rather "
            "than load plugins it cannot pin (supported: the releases docs/integration.md "
            "names; `hermes-plugins deactivate` restores Hermes's own loading)"
            % (version(), module.__name__, ", ".join(missing))
        )


def check_home(home, plan, environ):
    """Refuses a Hermes running with another home than the one ``exec`` prepared."""
    expected_home = environ.get("HERMES_PLUGINS_AGENT_HOME")
    actual = os.path.realpath(str(home))
    if expected_home and actual != os.path.realpath(expected_home):
        raise GenerationError(
            "Hermes runs with home %s, but hermes-plugins exec prepared profile %r (%s)"
            % (actual, plan.profile, expected_home)
        )
