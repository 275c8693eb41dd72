"""Request limits: body sizes (MAX_CONTENT_LENGTH for the whole site, a
tighter BOZKA_MAX_JSON_BODY for the views marked ``small_body``, the JSON
APIs), and the client's network as a rate-limit key (Flask-Limiter's
``key_func``), so that a limit holds across the addresses of one network."""
import ipaddress

from flask import abort, request
from flask_limiter.util import get_remote_address

# One network: an IPv4 /24 (a household, an office or a small provider
# block) or an IPv6 /64 (what one site, often one machine, is given).
PREFIXES = {4: 24, 6: 64}


def network_of(address):
    """The network an address belongs to ("203.0.113.0/24", "2001:db8::/64");
    an IPv4-mapped IPv6 address counts as its IPv4 address; anything that is
    no address is its own key."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address or ""
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return str(ipaddress.ip_network(f"{ip}/{PREFIXES[ip.version]}", strict=False))


def remote_network():
    """Flask-Limiter key function: the network of the client's address."""
    return network_of(get_remote_address())


def small_body(view):
    """Mark a view whose requests carry at most BOZKA_MAX_JSON_BODY bytes."""
    view.max_body_setting = "BOZKA_MAX_JSON_BODY"
    return view


def init_app(app):
    """Refuse a body larger than its view's limit with 413 before anything
    reads it: registered before every other hook (CSRF reads forms)."""

    @app.before_request
    def refuse_large_body():
        setting = getattr(app.view_functions.get(request.endpoint), "max_body_setting", None)
        if setting:
            # Flask 3.1: the limit of this request only; Werkzeug enforces it
            # on a body without Content-Length (chunked) as it is read.
            request.max_content_length = app.config[setting]
        limit = request.max_content_length
        if limit is not None and (request.content_length or 0) > limit:
            abort(413)
