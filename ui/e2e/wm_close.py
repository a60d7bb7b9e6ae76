#!/usr/bin/python3
"""Asks a top-level window to close the way a window manager does when its close
button is clicked: a WM_DELETE_WINDOW client message (ICCCM). The desktop tests run
under Xvfb with no window manager, so they send it themselves.

Usage: wm_close.py TITLE PID   (exits 1 if that process has no mapped window of that title)
"""

import sys

from Xlib import X, display
from Xlib.protocol import event


def windows(win):
    yield win
    for child in win.query_tree().children:
        yield from windows(child)


def main():
    title, pid = sys.argv[1], int(sys.argv[2])
    d = display.Display()
    net_wm_pid = d.intern_atom("_NET_WM_PID")
    protocols = d.intern_atom("WM_PROTOCOLS")
    delete = d.intern_atom("WM_DELETE_WINDOW")
    for win in windows(d.screen().root):
        try:
            name = win.get_wm_name()
            mapped = win.get_attributes().map_state == X.IsViewable
            speaks = delete in (win.get_wm_protocols() or [])
            owner = win.get_full_property(net_wm_pid, X.AnyPropertyType)
        except Exception:  # a window that went away meanwhile
            continue
        if isinstance(name, bytes):
            name = name.decode("utf-8", "replace")
        # A window of the app that ran before may still be on the screen for a moment.
        if name == title and mapped and speaks and owner is not None and owner.value[0] == pid:
            msg = event.ClientMessage(window=win, client_type=protocols, data=(32, [delete, X.CurrentTime, 0, 0, 0]))
            win.send_event(msg, event_mask=X.NoEventMask)
            d.flush()
            return 0
    print(f"process {pid} has no mapped window titled {title!r}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
