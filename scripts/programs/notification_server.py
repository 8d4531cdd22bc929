"""A desktop notification server for the tests: it owns org.freedesktop.Notifications on the
session bus it is given (DBUS_SESSION_BUS_ADDRESS), as a desktop's notification daemon does, and
writes each Notify call it gets as one JSON line to the file named by its first argument. It
writes "ready" to the file named by its second argument once it owns the name.

Needs python3-dbus and python3-gi (.ci/run installs them).
"""

import json
import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

INTERFACE = "org.freedesktop.Notifications"


class Server(dbus.service.Object):
    """The notification server's object, at the path libnotify calls."""

    def __init__(self, bus, log):
        super().__init__(bus, "/org/freedesktop/Notifications")
        self.log = log
        self.last = 0

    @dbus.service.method(INTERFACE, in_signature="susssasa{sv}i", out_signature="u")
    def Notify(self, app_name, replaces_id, app_icon, summary, body, actions, hints, timeout):
        self.last += 1
        record = {
            "app_name": str(app_name),
            "summary": str(summary),
            "body": str(body),
            "urgency": int(hints.get("urgency", -1)),
        }
        with open(self.log, "a", encoding="utf-8") as log:
            log.write(json.dumps(record) + "\n")
        return dbus.UInt32(self.last)

    @dbus.service.method(INTERFACE, in_signature="", out_signature="as")
    def GetCapabilities(self):
        return ["body"]

    @dbus.service.method(INTERFACE, in_signature="", out_signature="ssss")
    def GetServerInformation(self):
        return ("panectl-test", "panectl", "1", "1.2")

    @dbus.service.method(INTERFACE, in_signature="u", out_signature="")
    def CloseNotification(self, _id):
        pass


def main():
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    name = dbus.service.BusName(INTERFACE, bus, do_not_queue=True)
    server = Server(bus, sys.argv[1])
    with open(sys.argv[2], "w", encoding="utf-8") as ready:
        ready.write("ready\n")
    GLib.MainLoop().run()
    del name, server


if __name__ == "__main__":
    main()
