# panectl's identify gate for a tmux control client on a host reached over ssh: the Python twin
# of src/tmux/attach/identify.rs and relay.rs (docs/tmux-crashes.md says why it exists).
#
# tmux 3.2 to 3.7 can crash when a notification reaches a control client that is half
# introduced. The client is therefore started against a private socket of this script's; the
# script checks that the process that connects is that client, connects to the real server,
# holds back MSG_IDENTIFY_FLAGS and MSG_IDENTIFY_LONGFLAGS, and writes them together with
# MSG_IDENTIFY_DONE in one write once the server has read everything before them. Then it only
# copies, descriptors included. The control protocol itself does not pass through here: tmux
# reads and writes the client's stdin and stdout (the ssh channel), handed over as descriptors.
#
# Usage: python3 -c GATE (-S PATH | -L NAME) TMUX-ARGS...
import array
import os
import select
import socket
import struct
import subprocess
import sys
import tempfile
import time

FLAGS, DONE, LONGFLAGS = 100, 106, 111
PROTOCOL, HEADER = 8, 16
MAX_MESSAGE = 1 << 20
FD_MARK = 0x80000000


def fail(message, code=3):
    sys.stderr.write("panectl gate: %s\n" % message)
    sys.exit(code)


def server_path(kind, value):
    if kind == "-S":
        return value
    base = os.environ.get("TMUX_TMPDIR") or "/tmp"
    return os.path.join(base, "tmux-%d" % os.getuid(), value)


def parse_header(header):
    kind, word = struct.unpack("=II", header[:8])
    if word & FD_MARK:
        return kind, word & ~FD_MARK & 0xFFFFFFFF, True
    length, flags = struct.unpack("=HH", header[4:8])
    if flags & ~1 == 0:
        return kind, length, bool(flags & 1)
    return kind, word, False


def receive(sock):
    data, ancillary, _, _ = sock.recvmsg(65536, socket.CMSG_SPACE(16 * 4))
    fds = []
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            received = array.array("i")
            received.frombytes(payload[: len(payload) - len(payload) % received.itemsize])
            fds.extend(received)
    return data, fds


def send_all(sock, data, fds=()):
    fds = list(fds)
    while data:
        if fds:
            sent = sock.sendmsg(
                [data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))]
            )
            for fd in fds:
                os.close(fd)
            fds = []
        else:
            sent = sock.send(data)
        data = data[sent:]
    for fd in fds:
        os.close(fd)


def unread(sock):
    """Bytes written to the server that it has not read (SIOCOUTQ); None where unknown."""
    try:
        import fcntl
        import termios

        answer = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0")
        return struct.unpack("i", answer)[0]
    except (ImportError, AttributeError, OSError):
        return None


def drained(server):
    deadline = time.monotonic() + 10
    while True:
        left = unread(server)
        if left is None:
            # Not Linux: give the server a moment to read what it has.
            time.sleep(0.05)
            return
        if left == 0:
            return
        if time.monotonic() > deadline:
            fail("the tmux server did not read the client's messages within 10 s")
        time.sleep(0.001)


def gate(client, server):
    """Relays the client's introduction through the gate; returns what is left to pass on."""
    pending, fds, held = b"", [], b""
    client.settimeout(10)
    while True:
        while len(pending) >= HEADER:
            header = pending[:HEADER]
            if struct.unpack("=I", header[8:12])[0] & 0xFF != PROTOCOL:
                # A protocol this gate does not know: pass everything on as it is.
                send_all(server, held)
                return pending, fds
            kind, length, has_fd = parse_header(header)
            if not HEADER <= length <= MAX_MESSAGE:
                fail("the tmux client sent a message of impossible length %d" % length)
            if len(pending) < length:
                break
            message, pending = pending[:length], pending[length:]
            fd = None
            if has_fd:
                if not fds:
                    fail("the tmux client sent message %d without its descriptor" % kind)
                fd = fds.pop(0)
            if kind in (FLAGS, LONGFLAGS) and fd is None:
                held += message
            elif kind == DONE and fd is None:
                drained(server)
                send_all(server, held + message)
                return pending, fds
            else:
                send_all(server, message, [fd] if fd is not None else [])
        try:
            data, received = receive(client)
        except socket.timeout:
            # A client that never finishes: stop holding anything back.
            send_all(server, held)
            return pending, fds
        if not data:
            for fd in received:
                os.close(fd)
            fail("the tmux client closed its connection before it was attached")
        pending += data
        fds.extend(received)


def channel_gone(events):
    """Whether poll reported the ssh channel (this script's stdout) closed by the far side."""
    return bool(events & (select.POLLHUP | select.POLLERR | select.POLLNVAL))


def copy(client, server):
    """Copies both ways until one side closes; returns False if the ssh channel went first.

    The channel is watched without reading it (tmux reads it): a connection that dropped leaves
    the tmux server with a control client whose output cannot go anywhere, which tmux never lets
    go (and which keeps `kill-server` from ever finishing), so the client must be ended here.
    """
    client.settimeout(None)
    peers = {client.fileno(): (client, server), server.fileno(): (server, client)}
    poller = select.poll()
    for fd in peers:
        poller.register(fd, select.POLLIN)
    poller.register(1, 0)
    while True:
        for fd, events in poller.poll():
            if fd == 1:
                if channel_gone(events):
                    return False
                continue
            side, other = peers[fd]
            data, fds = receive(side)
            if not data:
                for received in fds:
                    os.close(received)
                return True
            send_all(other, data, fds)


def end(child):
    """Ends the tmux client: SIGTERM (it says goodbye to the server), then SIGKILL."""
    try:
        child.terminate()
        return child.wait(timeout=2)
    except subprocess.TimeoutExpired:
        child.kill()
        return child.wait()


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("-S", "-L"):
        fail("usage: gate (-S PATH | -L NAME) TMUX-ARGS...", 2)
    target = server_path(sys.argv[1], sys.argv[2])
    directory = tempfile.mkdtemp(prefix="panectl-attach-")
    path = os.path.join(directory, "c.s")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    environment = dict(os.environ)
    environment.pop("TMUX", None)
    try:
        listener.bind(path)
        listener.listen(1)
        child = subprocess.Popen(
            ["tmux", "-u", "-S", path] + sys.argv[3:], env=environment, close_fds=True
        )
        listener.settimeout(0.1)
        deadline = time.monotonic() + 10
        client = None
        while client is None:
            try:
                client, _ = listener.accept()
            except socket.timeout:
                if child.poll() is not None:
                    fail("tmux exited before it connected (status %d)" % child.returncode)
                if time.monotonic() > deadline:
                    child.kill()
                    fail("tmux did not connect within 10 s")
    finally:
        listener.close()
        try:
            os.unlink(path)
        except OSError:
            pass
        os.rmdir(directory)
    if hasattr(socket, "SO_PEERCRED"):
        credentials = client.getsockopt(
            socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")
        )
        peer = struct.unpack("3i", credentials)[0]
        if peer != child.pid:
            child.kill()
            fail("a process other than the tmux client (pid %d) connected" % peer)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.connect(target)
    except OSError as error:
        child.kill()
        fail("cannot connect to the tmux server at %s: %s" % (target, error))
    rest, fds = gate(client, server)
    if rest:
        send_all(server, rest, fds)
    else:
        for fd in fds:
            os.close(fd)
    try:
        channel_open = copy(client, server)
    except OSError:
        channel_open = True
    if not channel_open:
        # The server forgets the client as soon as its connection closes.
        server.close()
        client.close()
        sys.exit(end(child))
    client.close()
    server.close()
    sys.exit(child.wait())


main()
