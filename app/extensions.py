"""Every Flask extension, created once and bound in the app factory."""
from flask_babel import Babel
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_login import LoginManager
from flask_migrate import Migrate
from flask_sqlalchemy import SQLAlchemy
from flask_static_digest import FlaskStaticDigest
from flask_wtf.csrf import CSRFProtect
from sqlalchemy import MetaData

# Stable constraint names, so Alembic migrations work on SQLite and PostgreSQL.
naming_convention = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

db = SQLAlchemy(metadata=MetaData(naming_convention=naming_convention))
def include_object(obj, name, type_, reflected, compare_to):
    # These indexes have a DESC expression that autogenerate cannot
    # compare; their migrations create them by hand.
    return not (type_ == "index" and name in ("ix_sentences_next", "ix_participations_ranking"))


migrate = Migrate(render_as_batch=True, compare_type=True, include_object=include_object)
login_manager = LoginManager()
csrf = CSRFProtect()
babel = Babel()
static_digest = FlaskStaticDigest()  # its settings for `flask digest compile` and `clean`

from flask_socketio import SocketIO  # noqa: E402

socketio = SocketIO()

# Storage: RATELIMIT_STORAGE_URI (Redis when configured, so that every
# process shares the counts).
limiter = Limiter(key_func=get_remote_address, default_limits=[], headers_enabled=True)
