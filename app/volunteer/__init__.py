# The views register their routes on the blueprint as they are imported.
from . import views  # noqa: F401
from .blueprint import bp  # noqa: F401
