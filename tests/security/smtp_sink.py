"""A mail server for tests that accepts everything: enough SMTP (RFC 5321)
for smtplib, on loopback, keeping each message it receives. aiosmtpd is not
installed, and the standard library's smtpd is gone since Python 3.12."""
import email
import socket
import socketserver
import threading
from email import policy


class _Session(socketserver.StreamRequestHandler):
    def reply(self, line):
        self.wfile.write(line.encode() + b"\r\n")

    def handle(self):
        self.reply("220 sink ESMTP")
        recipients = []
        while line := self.rfile.readline():
            command = line.decode("ascii", "replace").strip()
            verb = command[:4].upper()
            if verb in ("EHLO", "HELO"):
                self.reply("250 sink")
            elif verb == "MAIL":
                recipients = []
                self.reply("250 OK")
            elif verb == "RCPT":
                recipients.append(command.split(":", 1)[1].strip(" <>"))
                self.reply("250 OK")
            elif verb == "DATA":
                self.reply("354 End data with <CR><LF>.<CR><LF>")
                lines = []
                while (data := self.rfile.readline()) not in (b".\r\n", b""):
                    lines.append(data[1:] if data.startswith(b"..") else data)  # dot-stuffing
                self.server.sink.keep(recipients, b"".join(lines))
                self.reply("250 OK queued")
            elif verb == "QUIT":
                self.reply("221 Bye")
                return
            else:  # RSET, NOOP
                self.reply("250 OK")


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class SmtpSink:
    """Start with ``start()``; ``messages`` are (recipients, email.message.EmailMessage)."""

    def __init__(self, port=0):
        self.port = port
        self.messages = []
        self._lock = threading.Lock()
        self._server = None

    def keep(self, recipients, raw):
        with self._lock:
            self.messages.append((recipients, email.message_from_bytes(raw, policy=policy.default)))

    def start(self):
        self._server = _Server(("127.0.0.1", self.port), _Session)
        self._server.sink = self
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self):
        self._server.shutdown()
        self._server.server_close()


def closed_port():
    """A loopback port nothing listens on (a mail server that is down)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
