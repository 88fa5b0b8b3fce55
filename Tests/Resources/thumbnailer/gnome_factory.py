"""GNOME's own thumbnail factory (gnome-desktop 3, through PyGObject) making and saving one thumbnail, as
Nautilus does: can_thumbnail, generate_thumbnail (which runs the .thumbnailer entry found under
$XDG_DATA_DIRS/thumbnailers, inside bubblewrap), save_thumbnail into $XDG_CACHE_HOME/thumbnails.

    /usr/bin/python3 gnome_factory.py FILE MIME-TYPE

Prints one JSON object: {"can": bool, "generated": bool, "width", "height", "saved": path or null,
"error": text or null}. Exit status 0 whatever happened (the caller asserts on the JSON).
"""

import json
import os
import sys

import gi

gi.require_version("GnomeDesktop", "3.0")
gi.require_version("GdkPixbuf", "2.0")
from gi.repository import GdkPixbuf, Gio, GLib, GnomeDesktop  # noqa: E402,F401


def main():
    path, mime = sys.argv[1], sys.argv[2]
    gfile = Gio.File.new_for_path(path)
    uri = gfile.get_uri()
    mtime = int(os.stat(path).st_mtime)
    factory = GnomeDesktop.DesktopThumbnailFactory.new(GnomeDesktop.DesktopThumbnailSize.NORMAL)
    out = {"uri": uri, "can": bool(factory.can_thumbnail(uri, mime, mtime)), "generated": False,
           "width": None, "height": None, "saved": None, "error": None}
    if out["can"]:
        try:
            pixbuf = factory.generate_thumbnail(uri, mime, None)
        except GLib.Error as e:
            out["error"] = e.message
            pixbuf = None
        if pixbuf is not None:
            out["generated"] = True
            out["width"], out["height"] = pixbuf.get_width(), pixbuf.get_height()
            factory.save_thumbnail(pixbuf, uri, mtime, None)
            out["saved"] = GnomeDesktop.desktop_thumbnail_path_for_uri(uri, GnomeDesktop.DesktopThumbnailSize.NORMAL)
    print(json.dumps(out))


main()
