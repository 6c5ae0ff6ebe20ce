"""Small shared widgets and helpers: the table model and keyboard-friendly tables, safe text,
the theme, actions, the view protocol, opening a path, the folder dialog, turns of the event
loop. Imports gui.qt_compat and core only."""
