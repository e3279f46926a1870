// GLib, GObject and GIO (gio-2.0), for the shared main loop thread.
#include <glib.h>
#include <glib-object.h>
#include <gio/gio.h>
#include <glib-unix.h>
