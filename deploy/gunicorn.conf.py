"""gunicorn settings for one Bozka server process (see docs/deployment.md).

    gunicorn -c deploy/gunicorn.conf.py --bind 127.0.0.1:8001 wsgi:app

One worker per process, with gevent and WebSocket support (the worker class
Flask-SocketIO documents for gunicorn): a Socket.IO connection lives in the
process that accepted it, so run several processes (each its own port,
behind nginx with sticky sessions), never several workers in one.
"""
import os

bind = os.environ.get("BOZKA_BIND", "127.0.0.1:8001")
# make run's worker (app/worker.py): GeventWebSocketWorker with bounds. Behind
# nginx (BOZKA_PROXIES=1) every connection comes from nginx, so there is no
# per-address bound here (nginx's limit_conn is it); a request's head must
# still arrive within BOZKA_HEAD_TIMEOUT (10 s), longer than the upstream
# keepalive_timeout of deploy/nginx.conf (5 s), so nginx never sends a request
# on a connection gunicorn is closing.
worker_class = "app.worker.BoundedWorker"
workers = 1
# Greenlets per process: requests and open WebSockets together.
worker_connections = int(os.environ.get("BOZKA_WORKER_CONNECTIONS", "2000"))
timeout = 60
graceful_timeout = 10
keepalive = 5
accesslog = os.environ.get("BOZKA_ACCESS_LOG", "-")
# Behind nginx the client's address is in X-Forwarded-For.
access_log_format = '%({x-forwarded-for}i)s %(h)s "%(r)s" %(s)s %(b)s %(M)sms'
# gunicorn's control socket has one default path for every process on the
# machine: off, since several processes run side by side.
control_socket_disable = True
