"""Checks on the IR: each rule reports diagnostics and never raises on user mistakes."""
