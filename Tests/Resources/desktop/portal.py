'''A stand-in xdg-desktop-portal for ftgst's desktop tests: a python-dbusmock template (the way xdg-desktop-portal
tests itself), serving org.freedesktop.portal.Desktop on the private session bus a test starts.

Every call is written to the mock's log (`-l FILE`) by dbusmock, one line each, and its arguments as JSON on a
line of its own starting `ftgst-call ` (what the tests read). Parameters (`-p JSON`):

  file_chooser: "answer" (default) | "hang" (the call never returns)
  response:     0 picked (default), 1 cancelled, 2 failed: the Request.Response the chooser sends
  uris:         the uris it answers with (default: none)
  answers:      a list of uris lists, one per OpenFile call in turn (then `uris`)
  delay_ms:     after how long it sends the Response (default 50); -1: never (the user is still choosing)
  interfaces:   the other portal interfaces it serves (a `version` property each): any of "Notification",
                "Inhibit", "MemoryMonitor", "OpenURI" (default none)
  open_uri:     "hang": OpenURI.OpenFile never returns
  refuse_notifications: AddNotification answers org.freedesktop.portal.Error.NotAllowed (as the portal may
                for a program outside a sandbox, with no application id)

A test emits a signal (Notification.ActionInvoked, MemoryMonitor.LowMemoryWarning) through dbusmock's own
org.freedesktop.DBus.Mock.EmitSignal.
'''

import json
import os
import time

import dbus
import dbus.lowlevel
import dbus.service
from gi.repository import GLib

BUS_NAME = 'org.freedesktop.portal.Desktop'
MAIN_OBJ = '/org/freedesktop/portal/desktop'
MAIN_IFACE = 'org.freedesktop.portal.FileChooser'
SYSTEM_BUS = False

REQUEST_IFACE = 'org.freedesktop.portal.Request'
PARAMETERS = {}


def plain(value):
    '''A dbus-python value as plain JSON-able Python.'''
    if isinstance(value, dbus.Boolean):
        return bool(value)
    if isinstance(value, (dbus.Byte, int)):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if isinstance(value, dbus.Array) and value.signature == 'y':
            return bytes(int(b) for b in value).rstrip(b'\0').decode('utf-8', 'replace')
        return [plain(v) for v in value]
    return repr(value)


def record(mock, method, *args):
    mock.log('ftgst-call ' + json.dumps({'method': method, 'args': plain(list(args)), 'time': time.time()}))


def load(mock, parameters):
    PARAMETERS.clear()
    PARAMETERS.update(parameters)
    mock.AddProperties(MAIN_IFACE, {'version': dbus.UInt32(4, variant_level=1)})
    for name in parameters.get('interfaces', []):
        mock.AddProperties('org.freedesktop.portal.' + name, {'version': dbus.UInt32(1, variant_level=1)})
    if 'OpenURI' in parameters.get('interfaces', []):
        # OpenURI.OpenFile shares its name with FileChooser.OpenFile: dbus-python looks a method up by name and
        # interface along the class's MRO, so it goes on a subclass.
        mock.__class__ = type('PortalWithOpenURI', (mock.__class__,), {'OpenFile': OpenURIOpenFile})


def opened_path(fd):
    '''The path of a descriptor passed in the call (closed here).'''
    number = fd.take()
    try:
        return os.readlink('/proc/self/fd/%d' % number)
    finally:
        os.close(number)


def served(name):
    if name not in PARAMETERS.get('interfaces', []):
        raise dbus.exceptions.DBusException('not served here', name='org.freedesktop.DBus.Error.UnknownMethod')


def request_path(sender, token):
    return '/org/freedesktop/portal/desktop/request/%s/%s' % (sender[1:].replace('.', '_'), token)


def send_response(mock, path, response, results):
    message = dbus.lowlevel.SignalMessage(path, REQUEST_IFACE, 'Response')
    message.append(dbus.UInt32(response), dbus.Dictionary(results, signature='sv'), signature='ua{sv}')
    mock.connection.send_message(message)
    return False


@dbus.service.method(MAIN_IFACE, in_signature='ssa{sv}', out_signature='o', sender_keyword='sender',
                     async_callbacks=('reply', 'error'))
def OpenFile(self, parent_window, title, options, sender=None, reply=None, error=None):
    record(self, 'FileChooser.OpenFile', parent_window, title, options)
    mode = PARAMETERS.get('file_chooser', 'answer')
    if mode == 'hang':
        return  # never replies: the caller's deadline must end it
    path = request_path(sender, str(options.get('handle_token', 't')))
    # The request object, whose Close dbusmock logs as a `Close` line.
    self.AddObject(path, REQUEST_IFACE, {}, [('Close', '', '', '')])
    reply(dbus.ObjectPath(path))
    response = int(PARAMETERS.get('response', 0))
    results = {}
    if response == 0:
        answers = PARAMETERS.get('answers', [])
        uris = answers.pop(0) if answers else PARAMETERS.get('uris', [])
        results['uris'] = dbus.Array(uris, signature='s')
    delay = int(PARAMETERS.get('delay_ms', 50))
    if delay >= 0:
        GLib.timeout_add(delay, send_response, self, path, response, results)


@dbus.service.method('org.freedesktop.portal.Notification', in_signature='sa{sv}', out_signature='')
def AddNotification(self, notification_id, notification):
    served('Notification')
    record(self, 'Notification.AddNotification', notification_id, notification)
    if PARAMETERS.get('refuse_notifications'):
        raise dbus.exceptions.DBusException('an application id is needed',
                                            name='org.freedesktop.portal.Error.NotAllowed')


@dbus.service.method('org.freedesktop.portal.Notification', in_signature='s', out_signature='')
def RemoveNotification(self, notification_id):
    served('Notification')
    record(self, 'Notification.RemoveNotification', notification_id)


@dbus.service.method('org.freedesktop.portal.Inhibit', in_signature='sua{sv}', out_signature='o',
                     sender_keyword='sender')
def Inhibit(self, window, flags, options, sender=None):
    served('Inhibit')
    record(self, 'Inhibit.Inhibit', window, flags, options)
    path = request_path(sender, str(options.get('handle_token', 'inhibit')))
    self.AddObject(path, REQUEST_IFACE, {}, [('Close', '', '', '')])
    return dbus.ObjectPath(path)


@dbus.service.method('org.freedesktop.portal.OpenURI', in_signature='sha{sv}', out_signature='o')
def OpenDirectory(self, parent_window, fd, options):
    served('OpenURI')
    record(self, 'OpenURI.OpenDirectory', parent_window, opened_path(fd), options)
    return dbus.ObjectPath('/org/freedesktop/portal/desktop/request/0/opendirectory')


@dbus.service.method('org.freedesktop.portal.OpenURI', in_signature='ssa{sv}', out_signature='o')
def OpenURI(self, parent_window, uri, options):
    served('OpenURI')
    record(self, 'OpenURI.OpenURI', parent_window, uri, options)
    return dbus.ObjectPath('/org/freedesktop/portal/desktop/request/0/openuri')


@dbus.service.method('org.freedesktop.portal.OpenURI', in_signature='sha{sv}', out_signature='o',
                     async_callbacks=('reply', 'error'))
def OpenURIOpenFile(self, parent_window, fd, options, reply=None, error=None):
    record(self, 'OpenURI.OpenFile', parent_window, opened_path(fd), options)
    if PARAMETERS.get('open_uri') == 'hang':
        return  # never replies: the caller's deadline must end it
    reply(dbus.ObjectPath('/org/freedesktop/portal/desktop/request/0/openfile'))
