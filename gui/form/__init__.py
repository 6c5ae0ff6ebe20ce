"""What to profile and how: the model and config panels, the config queue, the trust notices
before code from a file runs. Imports gui.qt_compat, gui.widgets, gui.charts, gui.panels and core."""
