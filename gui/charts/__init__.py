"""The live charts (pyqtgraph): latency per iteration, the latency distribution, compile stages,
sweeps, and their axes and buffers. Imports gui.qt_compat and gui.widgets, and core."""
